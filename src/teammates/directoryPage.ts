/**
 * One page of a directory sync, merged into the teammate aggregate in the caller's transaction:
 * mergeDirectoryPage() is the one way in. The sync engine (src/sync/write.ts) hands it the page's
 * rows, already checked and fingerprinted; this module stages them in temporary tables, settles who
 * is who, runs the merge stages of teammates.ts (one table each) and answers what the run counts.
 *
 *   stage        the page's rows into the staging tables (one JSON document per table), each user
 *                with the teammate of its source row or address looked up as it is staged
 *   match        users whose address an existing teammate holds are settled (or reported)
 *   teammates    teammates and their sources       \
 *   addresses    emails                             |  teammates.ts, one table each
 *   memberships  teammate_sources.group_ids         |
 *   values       smart-field values                /
 *   seen         the caller's: who the run saw
 *   events       teammate.created (teammates.ts)
 *
 * The staging tables live for the connection and are emptied at each commit (on commit delete
 * rows); nothing outside this folder names them.
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import { announceCreated, mergeAddresses, mergeMemberships, mergeTeammates, mergeValues } from './teammates.ts';

/** Times named stages (src/sync/timing.ts's StageTimer is one). */
export interface StageClock {
  time<T>(stage: string, fn: () => Promise<T>): Promise<T>;
}

/** A directory user to write: its attributes, its fingerprint, and its photo reference. */
export interface StagedUser {
  ext_id: string;
  display_name: string | null | undefined;
  given_name: string | null | undefined;
  family_name: string | null | undefined;
  email: string;
  photo_ref: string | null;
  fingerprint: string;
  /** Null when the directory does not tell: the teammate keeps its mark. */
  shared_mailbox: boolean | null;
}

/** A page's rows, one array per staging table. */
export interface DirectoryPageRows {
  users: StagedUser[];
  emails: { ext_id: string; address: string; is_primary: boolean }[];
  values: { ext_id: string; field_id: string; value: string }[];
  groups: { ext_id: string; group_id: string }[];
}

export interface DirectoryPageTarget {
  workspaceId: string;
  integrationId: string;
  /** `teammates` creates and updates teammates; `smart_fields` only updates values of existing ones. */
  category: 'teammates' | 'smart_fields';
  /** The smart fields the integration maps: their values are set, or cleared where the page has none. */
  fieldIds: string[];
  /** False when the page's users come without their groups: only their org units are written (existing teammates keep their groups). */
  groupsKnown?: boolean;
}

export interface PageProblem {
  externalId: string;
  email: string;
  message: string;
}

export interface MergedPage {
  /** The users written, external id -> teammate id. */
  written: Map<string, string>;
  /** Users of a smart-field source that match no teammate, skipped. */
  unmatched: number;
  /** Users and aliases refused because another teammate holds the address. */
  problems: PageProblem[];
  /** Teammates created or brought back (teammate.created was written for each). */
  createdIds: string[];
  /** Teammates whose signature inputs changed (new, names, emails, memberships or smart-field values). */
  changedTeammateIds: string[];
}

export interface PageSteps {
  timer: StageClock;
  /** Called after the merge stages with the users written: the run records whom it saw. */
  seen: (externalIds: string[]) => Promise<void>;
  /** Awaited before the first write to rows other pages of the run write too (the events). */
  shared: () => Promise<unknown>;
}

async function ensureStaging(client: pg.PoolClient): Promise<void> {
  await client.query(`
    create temp table if not exists stage_users (
      ext_id text primary key, display_name text, given_name text, family_name text, email text, photo_ref text, fingerprint text,
      shared_mailbox boolean, teammate_id uuid, holder uuid, is_new boolean not null default false, revived boolean not null default false
    ) on commit delete rows;
    create temp table if not exists stage_emails (ext_id text, address text, is_primary boolean, holder uuid) on commit delete rows;
    create temp table if not exists stage_values (ext_id text, field_id uuid, value text) on commit delete rows;
    create temp table if not exists stage_groups (ext_id text, group_id uuid) on commit delete rows;
    create temp table if not exists stage_changed (teammate_id uuid primary key) on commit delete rows;
  `);
}

async function stageGroups(client: pg.PoolClient, groups: DirectoryPageRows['groups']): Promise<void> {
  if (groups.length)
    await client.query(`insert into stage_groups select * from json_to_recordset($1::json) as x(ext_id text, group_id uuid)`, [JSON.stringify(groups)]);
}

/** The page's rows into the staging tables. */
async function stagePage(client: pg.PoolClient, t: DirectoryPageTarget, rows: DirectoryPageRows): Promise<void> {
  // Rows go to Postgres as one JSON document per staging table: JSON.stringify makes one string
  // where array parameters would be escaped element by element.
  // Who is who, looked up as the rows are staged: the integration's source row for the user, and
  // the teammate already holding each address. Users known to neither get a new teammate id here
  // (a smart-field source never creates teammates: matchPeople drops them).
  await client.query(
    `insert into stage_users (ext_id, display_name, given_name, family_name, email, photo_ref, fingerprint, shared_mailbox, teammate_id, holder, is_new)
     select u.*, coalesce(src.id, case when h.id is null and $4 = 'teammates' then gen_random_uuid() end), h.id, src.id is null and h.id is null
       from json_to_recordset($1::json) as u(ext_id text, display_name text, given_name text, family_name text, email text, photo_ref text, fingerprint text, shared_mailbox boolean)
       left join lateral (select ts.teammate_id as id from teammate_sources ts where ts.integration_id = $3 and ts.external_id = u.ext_id) src on true
       left join lateral (select e.teammate_id as id from emails e where e.workspace_id = $2 and lower(e.address) = lower(u.email)) h on true`,
    [JSON.stringify(rows.users), t.workspaceId, t.integrationId, t.category],
  );
  await client.query(
    `insert into stage_emails (ext_id, address, is_primary, holder)
     select x.*, (select e.teammate_id from emails e where e.workspace_id = $2 and lower(e.address) = lower(x.address))
       from json_to_recordset($1::json) as x(ext_id text, address text, is_primary boolean)`,
    [JSON.stringify(rows.emails), t.workspaceId],
  );
  if (rows.values.length)
    await client.query(`insert into stage_values select * from json_to_recordset($1::json) as x(ext_id text, field_id uuid, value text)`, [
      JSON.stringify(rows.values),
    ]);
  await stageGroups(client, rows.groups);
}

/**
 * Settles who is who for the users stagePage could not place: a user whose address an existing
 * teammate holds becomes that teammate, unless the teammate already has a source in this
 * integration (or has another); such an address is reported and its user skipped. A smart-field
 * source skips users it cannot match. Answers the users staged to be written, and how many users it
 * skipped as unmatched.
 */
async function matchPeople(
  client: pg.PoolClient,
  t: DirectoryPageTarget,
  problems: PageProblem[],
): Promise<{ written: { ext_id: string; teammate_id: string; is_new: boolean }[]; unmatched: number }> {
  await client.query(
    `update stage_users s set teammate_id = s.holder
      where s.teammate_id is null and s.holder is not null
        and ($2 = 'smart_fields' or (select 1 from teammate_sources ts where ts.teammate_id = s.holder and ts.integration_id = $1 limit 1) is null)`,
    [t.integrationId, t.category],
  );
  const dup = await client.query<{ ext_id: string; email: string }>(
    `delete from stage_users s where s.holder is not null and (s.teammate_id is null or s.holder <> s.teammate_id)
      returning s.ext_id, s.email`,
  );
  for (const d of dup.rows) problems.push({ externalId: d.ext_id, email: d.email, message: `email ${d.email} already belongs to another teammate; skipped` });
  // A smart-field source never creates or deletes teammates; users it cannot match are skipped.
  const unmatched = t.category === 'smart_fields' ? ((await client.query(`delete from stage_users where teammate_id is null`)).rowCount ?? 0) : 0;
  const written = (await client.query<{ ext_id: string; teammate_id: string; is_new: boolean }>('select ext_id, teammate_id, is_new from stage_users')).rows;
  return { written, unmatched };
}

/**
 * Merges one page of directory users (not empty) in the caller's transaction, set-based, in the
 * stages above (timed by `steps.timer`). Rows are updated only where they differ (IS DISTINCT
 * FROM), so an unchanged directory writes nothing but the run's bookkeeping.
 */
export async function mergeDirectoryPage(client: pg.PoolClient, t: DirectoryPageTarget, rows: DirectoryPageRows, steps: PageSteps): Promise<MergedPage> {
  const { timer } = steps;
  await ensureStaging(client);
  await timer.time('stage', () => stagePage(client, t, rows));
  const problems: PageProblem[] = [];
  const { written, unmatched } = await timer.time('match', () => matchPeople(client, t, problems));
  const merge = { workspaceId: t.workspaceId, integrationId: t.integrationId, ids: written.filter((r) => !r.is_new).map((r) => r.teammate_id) };
  if (t.category === 'teammates') {
    await timer.time('teammates', () => mergeTeammates(client, merge));
    const aliasDup = await timer.time('addresses', () => mergeAddresses(client, merge));
    for (const d of aliasDup)
      problems.push({ externalId: d.ext_id, email: d.address, message: `alias ${d.address} already belongs to another teammate; not added` });
    await timer.time('memberships', () => mergeMemberships(client, merge, t.groupsKnown === false ? ['org_unit'] : ['group', 'org_unit']));
  }
  if (t.fieldIds.length) await timer.time('values', () => mergeValues(client, merge, t.fieldIds));
  await steps.seen(written.map((r) => r.ext_id));

  // teammate.created for new and returning teammates, with their addresses, in this transaction.
  await steps.shared();
  const createdIds = await timer.time('events', () => announceCreated(client, t.workspaceId));
  const changed = await client.query<{ teammate_id: string }>(
    `select s.teammate_id from stage_users s
      where s.is_new or s.revived or exists (select 1 from stage_changed c where c.teammate_id = s.teammate_id)`,
  );
  return {
    written: new Map(written.map((r) => [r.ext_id, r.teammate_id])),
    unmatched,
    problems,
    createdIds,
    changedTeammateIds: changed.rows.map((r) => r.teammate_id),
  };
}

/**
 * Of the users `fingerprints` lists (external id -> fingerprint), those whose fingerprint equals
 * the stored one of the integration's source (of a teammate not deleted). A fingerprint ending in
 * `.` (groups unknown) is compared with the stored one's first part.
 */
export async function unchangedSources(db: Queryable, integrationId: string, fingerprints: ReadonlyMap<string, string>): Promise<string[]> {
  const { rows } = await db.query<{ ext_id: string }>(
    `select x.ext_id from unnest($2::text[], $3::text[]) x(ext_id, fingerprint)
      where x.fingerprint = (select case when right(x.fingerprint, 1) = '.' then split_part(ts.fingerprint, '.', 1) || '.' else ts.fingerprint end
                               from teammate_sources ts join teammates t on t.id = ts.teammate_id and t.deleted_at is null
                              where ts.integration_id = $1 and ts.external_id = x.ext_id)`,
    [integrationId, [...fingerprints.keys()], [...fingerprints.values()]],
  );
  return rows.map((r) => r.ext_id);
}
