/**
 * Writes one page of directory users in one transaction, set-based, in named stages whose times add
 * up in the run's `stage_ms` (src/sync/timing.ts):
 *
 *   prepare      in-page checks (no address, an address twice, a user twice), fingerprints (no SQL)
 *   match        unchanged users (same fingerprint as stored) are only recorded as seen; after
 *                staging, users whose address an existing teammate holds are settled
 *   stage        the page's rows into temporary staging tables (one JSON document per table), each
 *                user with the teammate of its source row or address looked up as it is staged
 *   teammates    teammates and their sources       \
 *   addresses    emails                             |  src/teammates/teammates.ts, one table each
 *   memberships  memberships                        |
 *   values       smart-field values                /
 *   seen         who the run saw (src/integrations/syncRuns.ts)
 *   events       teammate.created (src/teammates/teammates.ts, through src/db/outbox.ts)
 *
 * Rows are updated only where they differ (IS DISTINCT FROM), so an unchanged directory writes
 * nothing but the run's bookkeeping.
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import type { DirectoryUser } from '../../connectors/types.ts';
import { attribute, baseFingerprint, fingerprint, groupsFingerprint } from './fingerprint.ts';
import { KIND_EXPECTS, valueFitsKind, type SmartFieldKind } from '../render/kinds.ts';
import { recordSeen } from '../integrations/syncRuns.ts';
import { announceCreated, mergeAddresses, mergeMemberships, mergeTeammates, mergeValues, setGroupsFingerprints } from '../teammates/teammates.ts';
import { StageTimer } from './timing.ts';

export interface MappedField {
  id: string;
  attribute: string;
  /** The field's kind: a directory value that does not fit it is left empty and reported. */
  kind: SmartFieldKind;
}

export interface PageContext {
  workspaceId: string;
  integrationId: string;
  runId: string;
  /** `teammates` creates and updates teammates; `smart_fields` only updates values of existing ones. */
  category: 'teammates' | 'smart_fields';
  fields: MappedField[];
  /** group/org-unit external id -> groups.id for this integration. */
  groupIds: ReadonlyMap<string, string>;
  /**
   * Users listed before the provider's group memberships were known (DirectoryPage
   * `groupsPending`) and unchanged but for their groups (unchangedButGroups): they are only recorded
   * as seen, their groups compared and written once the provider has them (src/sync/pendingGroups.ts).
   * The page's other users come with their groups.
   */
  pendingGroups?: ReadonlySet<string>;
}

export interface RunErrorDetail {
  externalId: string;
  email?: string;
  message: string;
}

export interface PageResult {
  seen: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  errors: RunErrorDetail[];
  /** Teammates whose signature inputs changed (new, names, emails or smart-field values). */
  changedTeammateIds: string[];
  /** Directory users found unchanged (same fingerprint), only recorded as seen. */
  unchangedExternalIds: string[];
}

const norm = (email: string) => email.trim().toLowerCase();

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

interface Prepared {
  active: DirectoryUser[];
  removed: Set<string>;
  skipped: number;
  errors: RunErrorDetail[];
}

/** In-page checks: users without an address are skipped; an address used twice keeps its first user. */
function prepare(users: DirectoryUser[], removedIds: string[]): Prepared {
  const out: Prepared = { active: [], removed: new Set(removedIds), skipped: 0, errors: [] };
  const seenEmails = new Map<string, string>();
  // A user listed twice in one page (incremental listings may repeat one) counts once, last wins.
  const latest = new Map(users.map((u) => [u.externalId, u]));
  for (const u of latest.values()) {
    if (u.removed) {
      out.removed.add(u.externalId);
      continue;
    }
    if (!u.primaryEmail) {
      out.skipped++;
      continue;
    }
    const e = norm(u.primaryEmail);
    const owner = seenEmails.get(e);
    if (owner !== undefined) {
      out.errors.push({ externalId: u.externalId, email: u.primaryEmail, message: `email ${u.primaryEmail} also belongs to directory user ${owner}; skipped` });
      continue;
    }
    seenEmails.set(e, u.externalId);
    out.active.push(u);
  }
  return out;
}

/**
 * The users whose fingerprint equals the stored one (of a teammate not deleted). A fingerprint
 * ending in `.` (groups unknown) is compared with the stored one's first part.
 */
async function unchangedUsers(db: Queryable, integrationId: string, fingerprints: Map<string, string>): Promise<string[]> {
  const { rows } = await db.query<{ ext_id: string }>(
    `select x.ext_id from unnest($2::text[], $3::text[]) x(ext_id, fingerprint)
      where x.fingerprint = (select case when right(x.fingerprint, 1) = '.' then split_part(ts.fingerprint, '.', 1) || '.' else ts.fingerprint end
                               from teammate_sources ts join teammates t on t.id = ts.teammate_id and t.deleted_at is null
                              where ts.integration_id = $1 and ts.external_id = x.ext_id)`,
    [integrationId, [...fingerprints.keys()], [...fingerprints.values()]],
  );
  return rows.map((r) => r.ext_id);
}

const fieldsSignatureOf = (fields: readonly MappedField[]) => fields.map((f) => `${f.id}=${f.attribute}:${f.kind}`).join(',');

/**
 * Of users listed before their groups were known, those unchanged but for their groups (the first
 * part of their fingerprint is the stored one's): they need not wait for the groups.
 */
export async function unchangedButGroups(db: Queryable, ctx: Pick<PageContext, 'integrationId' | 'fields' | 'groupIds'>, users: readonly DirectoryUser[]): Promise<Set<string>> {
  const signature = fieldsSignatureOf(ctx.fields);
  const bases = new Map(users.map((u) => [u.externalId, `${baseFingerprint(u, ctx.fields, ctx.groupIds, signature)}.`]));
  return new Set(bases.size ? await unchangedUsers(db, ctx.integrationId, bases) : []);
}

/** The page's rows into the staging tables. */
async function stagePage(client: pg.PoolClient, ctx: PageContext, active: DirectoryUser[], fingerprints: Map<string, string>, errors: RunErrorDetail[]): Promise<void> {
  // Rows go to Postgres as one JSON document per staging table: JSON.stringify makes one string
  // where array parameters would be escaped element by element.
  const emailRows: { ext_id: string; address: string; is_primary: boolean }[] = [];
  const valueRows: { ext_id: string; field_id: string; value: string }[] = [];
  const groupRows: { ext_id: string; group_id: string }[] = [];
  for (const u of active) {
    emailRows.push({ ext_id: u.externalId, address: u.primaryEmail!.trim(), is_primary: true });
    for (const a of new Set(u.aliases.map((x) => x.trim()).filter((x) => x && norm(x) !== norm(u.primaryEmail!)))) {
      emailRows.push({ ext_id: u.externalId, address: a, is_primary: false });
    }
    for (const f of ctx.fields) {
      const v = attribute(u, f.attribute);
      if (v === undefined || v === '') continue;
      // A value its field's kind refuses (a url field holding `javascript:...`) is left empty, as if
      // the directory had none, and reported on the run (without the value itself).
      if (valueFitsKind(f.kind, v)) valueRows.push({ ext_id: u.externalId, field_id: f.id, value: v });
      else errors.push({ externalId: u.externalId, email: u.primaryEmail!, message: `${f.attribute}: the value is not ${KIND_EXPECTS[f.kind]}; left empty` });
    }
    for (const g of new Set([...u.groups, ...u.orgUnits])) {
      const id = ctx.groupIds.get(g);
      if (id) groupRows.push({ ext_id: u.externalId, group_id: id });
    }
  }
  const userRows = active.map((u) => ({
    ext_id: u.externalId,
    display_name: u.displayName,
    given_name: u.givenName,
    family_name: u.familyName,
    email: u.primaryEmail!.trim(),
    photo_ref: u.photo ? (u.photo.etag ?? u.photo.url ?? null) : null,
    fingerprint: fingerprints.get(u.externalId)!,
    // Null when the directory does not tell: the teammate keeps its mark.
    shared_mailbox: u.sharedMailbox ?? null,
  }));
  // Who is who, looked up as the rows are staged: the integration's source row for the user, and
  // the teammate already holding each address. Users known to neither get a new teammate id here
  // (a smart-field source never creates teammates: matchPeople drops them).
  await client.query(
    `insert into stage_users (ext_id, display_name, given_name, family_name, email, photo_ref, fingerprint, shared_mailbox, teammate_id, holder, is_new)
     select u.*, coalesce(src.id, case when h.id is null and $4 = 'teammates' then gen_random_uuid() end), h.id, src.id is null and h.id is null
       from json_to_recordset($1::json) as u(ext_id text, display_name text, given_name text, family_name text, email text, photo_ref text, fingerprint text, shared_mailbox boolean)
       left join lateral (select ts.teammate_id as id from teammate_sources ts where ts.integration_id = $3 and ts.external_id = u.ext_id) src on true
       left join lateral (select e.teammate_id as id from emails e where e.workspace_id = $2 and lower(e.address) = lower(u.email)) h on true`,
    [JSON.stringify(userRows), ctx.workspaceId, ctx.integrationId, ctx.category],
  );
  await client.query(
    `insert into stage_emails (ext_id, address, is_primary, holder)
     select x.*, (select e.teammate_id from emails e where e.workspace_id = $2 and lower(e.address) = lower(x.address))
       from json_to_recordset($1::json) as x(ext_id text, address text, is_primary boolean)`,
    [JSON.stringify(emailRows), ctx.workspaceId],
  );
  if (valueRows.length) await client.query(`insert into stage_values select * from json_to_recordset($1::json) as x(ext_id text, field_id uuid, value text)`, [JSON.stringify(valueRows)]);
  if (groupRows.length) await client.query(`insert into stage_groups select * from json_to_recordset($1::json) as x(ext_id text, group_id uuid)`, [JSON.stringify(groupRows)]);
}

/**
 * Settles who is who for the users stagePage could not place: a user whose address an existing
 * teammate holds becomes that teammate, unless the teammate already has a source in this
 * integration (or has another); such an address is reported and its user skipped. A smart-field
 * source skips users it cannot match. Answers the users staged to be written, and how many users it
 * skipped as unmatched.
 */
async function matchPeople(client: pg.PoolClient, ctx: PageContext, errors: RunErrorDetail[]): Promise<{ written: { ext_id: string; teammate_id: string; is_new: boolean }[]; unmatched: number }> {
  await client.query(
    `update stage_users s set teammate_id = s.holder
      where s.teammate_id is null and s.holder is not null
        and ($2 = 'smart_fields' or (select 1 from teammate_sources ts where ts.teammate_id = s.holder and ts.integration_id = $1 limit 1) is null)`,
    [ctx.integrationId, ctx.category],
  );
  const dup = await client.query<{ ext_id: string; email: string }>(
    `delete from stage_users s where s.holder is not null and (s.teammate_id is null or s.holder <> s.teammate_id)
      returning s.ext_id, s.email`,
  );
  for (const d of dup.rows) errors.push({ externalId: d.ext_id, email: d.email, message: `email ${d.email} already belongs to another teammate; skipped` });
  // A smart-field source never creates or deletes teammates; users it cannot match are skipped.
  const unmatched = ctx.category === 'smart_fields' ? ((await client.query(`delete from stage_users where teammate_id is null`)).rowCount ?? 0) : 0;
  const written = (await client.query<{ ext_id: string; teammate_id: string; is_new: boolean }>('select ext_id, teammate_id, is_new from stage_users')).rows;
  return { written, unmatched };
}

/**
 * Writes one page. `shared` is awaited before the first write to rows that other pages of the run
 * may write too (the events, whose trigger queues the webhook dispatch under one job key per
 * workspace); pages written at once (pages.ts) pass a wait for the page before to commit.
 */
export async function writePage(
  client: pg.PoolClient,
  ctx: PageContext,
  users: DirectoryUser[],
  removedIds: string[],
  timer = new StageTimer(),
  shared: () => Promise<unknown> = async () => {},
): Promise<PageResult> {
  await ensureStaging(client);
  const { active: listed, removed, errors, ...rest } = prepare(users, removedIds);
  let skipped = rest.skipped;
  // The kinds are part of the signature: values stored before they were checked by kind are
  // written once more, checked.
  const fieldsSignature = fieldsSignatureOf(ctx.fields);
  // A user whose groups are pending and who is written anyway (on a page of smart fields) is
  // fingerprinted without them: the groups part stays empty.
  const pending = ctx.pendingGroups ?? new Set<string>();
  const fingerprintOf = (u: DirectoryUser) =>
    pending.has(u.externalId) ? `${baseFingerprint(u, ctx.fields, ctx.groupIds, fieldsSignature)}.` : fingerprint(u, ctx.fields, ctx.groupIds, fieldsSignature);
  // On a page whose groups are pending, the caller found who is unchanged but for the groups
  // (unchangedButGroups), and only the others are fingerprinted; they are new or changed (pages of
  // one run are written by one execution, and pages sharing a person one after another, so that
  // still holds).
  const foundByCaller = ctx.category === 'teammates' && ctx.pendingGroups ? listed.map((u) => u.externalId).filter((id) => pending.has(id)) : undefined;
  const fingerprints = new Map((foundByCaller ? listed.filter((u) => !pending.has(u.externalId)) : listed).map((u) => [u.externalId, fingerprintOf(u)]));
  const unchanged =
    foundByCaller ?? (ctx.category !== 'teammates' || !listed.length ? [] : await timer.time('match', () => unchangedUsers(client, ctx.integrationId, fingerprints)));
  const same = new Set(unchanged);
  const active = listed.filter((u) => !same.has(u.externalId));
  // The unchanged users the caller found are the pending ones: they are seen with their groups pending.
  const recordSeenUsers = async (written: string[]) => {
    await recordSeen(client, ctx.runId, foundByCaller ? written : [...unchanged, ...written], [...removed]);
    if (foundByCaller?.length) await recordSeen(client, ctx.runId, foundByCaller, [], true);
  };

  if (!active.length) {
    await timer.time('seen', () => recordSeenUsers([]));
    return { seen: unchanged.length, created: 0, updated: 0, unchanged: unchanged.length, skipped, errors, changedTeammateIds: [], unchangedExternalIds: unchanged };
  }

  await timer.time('stage', () => stagePage(client, ctx, active, fingerprints, errors));
  const { written, unmatched } = await timer.time('match', () => matchPeople(client, ctx, errors));
  skipped += unmatched;
  const merge = { workspaceId: ctx.workspaceId, integrationId: ctx.integrationId, ids: written.filter((r) => !r.is_new).map((r) => r.teammate_id) };
  if (ctx.category === 'teammates') {
    await timer.time('teammates', () => mergeTeammates(client, merge));
    const aliasDup = await timer.time('addresses', () => mergeAddresses(client, merge));
    for (const d of aliasDup) errors.push({ externalId: d.ext_id, email: d.address, message: `alias ${d.address} already belongs to another teammate; not added` });
    await timer.time('memberships', () => mergeMemberships(client, merge, ['group', 'org_unit']));
  }
  if (ctx.fields.length) await timer.time('values', () => mergeValues(client, merge, ctx.fields.map((f) => f.id)));
  await timer.time('seen', () => recordSeenUsers(written.map((r) => r.ext_id)));

  // teammate.created for new and returning teammates, with their addresses, in this transaction (the owner writes it).
  await shared();
  const createdIds = new Set(await timer.time('events', () => announceCreated(client, ctx.workspaceId)));
  const changed = await client.query<{ teammate_id: string }>(
    `select s.teammate_id from stage_users s
      where s.is_new or s.revived or exists (select 1 from stage_changed c where c.teammate_id = s.teammate_id)`,
  );
  const changedTeammateIds = changed.rows.map((r) => r.teammate_id);
  const updated = changedTeammateIds.filter((id) => !createdIds.has(id)).length;
  return {
    seen: written.length + unchanged.length,
    created: createdIds.size,
    updated,
    unchanged: written.length - createdIds.size - updated + unchanged.length,
    skipped,
    errors,
    changedTeammateIds,
    unchangedExternalIds: unchanged,
  };
}

export interface PendingGroupsRow {
  ext_id: string;
  teammate_id: string;
  /** The stored fingerprint, `base.groups`. */
  fingerprint: string | null;
  /** The groups the provider now lists the user in (external ids). */
  groups: string[];
}

/**
 * Writes the group memberships of users listed before their groups were known and unchanged but
 * for them (pendingGroups.ts): only where the groups part of their fingerprint differs, in the
 * page's staging tables, by the memberships stage (groups only: their org units, in the first
 * part, are unchanged). Answers the teammates whose memberships changed.
 */
export async function writePendingGroups(client: pg.PoolClient, ctx: Pick<PageContext, 'workspaceId' | 'integrationId' | 'groupIds'>, rows: readonly PendingGroupsRow[]): Promise<string[]> {
  const changed = rows
    .map((r) => ({ ...r, part: groupsFingerprint(r.groups, ctx.groupIds) }))
    .filter((r) => r.fingerprint?.split('.')[1] !== r.part);
  if (!changed.length) return [];
  await ensureStaging(client);
  await client.query(
    `insert into stage_users (ext_id, teammate_id) select * from json_to_recordset($1::json) as x(ext_id text, teammate_id uuid)`,
    [JSON.stringify(changed.map((r) => ({ ext_id: r.ext_id, teammate_id: r.teammate_id })))],
  );
  const groupRows = changed.flatMap((r) => [...new Set(r.groups)].flatMap((g) => (ctx.groupIds.has(g) ? [{ ext_id: r.ext_id, group_id: ctx.groupIds.get(g)! }] : [])));
  if (groupRows.length) await client.query(`insert into stage_groups select * from json_to_recordset($1::json) as x(ext_id text, group_id uuid)`, [JSON.stringify(groupRows)]);
  await mergeMemberships(client, { workspaceId: ctx.workspaceId, integrationId: ctx.integrationId, ids: changed.map((r) => r.teammate_id) }, ['group']);
  await setGroupsFingerprints(client, ctx.integrationId, changed.map((r) => ({ externalId: r.ext_id, part: r.part })));
  return (await client.query<{ teammate_id: string }>('select teammate_id from stage_changed')).rows.map((r) => r.teammate_id);
}
