/**
 * The teammates aggregate: the only module that writes teammates, their directory sources,
 * addresses, memberships (the sources' group_ids) and smart-field values.
 *
 * Directories fill it page by page, through mergeDirectoryPage (directoryPage.ts). Each merge stage
 * below owns one table and reads the page from the staging tables directoryPage.ts filled
 * (stage_users with each user's teammate_id, stage_emails, stage_groups, stage_values); it updates a
 * row only where it differs (IS DISTINCT FROM) and adds the existing teammates it changed to
 * stage_changed (new and revived ones count as changed anyway).
 *
 * A page is a few hundred rows; these tables can hold millions. Every lookup into them is a
 * correlated subquery on a unique index or an `= any(ids)` on an indexed column, so a page costs
 * index probes for its own rows instead of a hash join over the whole workspace, which made every
 * page slower than the last. (The engine keeps their statistics fresh: stats.ts.)
 *
 * People change it by hand through the API (the functions at the end): manual smart-field values,
 * removing a teammate who comes from no directory, removing an alias address. Each such change asks
 * for the installs it affects, and a removal writes teammate.deleted, in the caller's transaction.
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import { stopAddresses } from '../installations/installations.ts';
import { emitEventsFrom, type TeammateEventBody } from '../db/outbox.ts';
import { requestTeammateInstalls } from '../jobs/triggers.ts';

export interface MergeContext {
  workspaceId: string;
  integrationId: string;
  /**
   * The teammates the page writes that existed before it (stage_users.teammate_id, not new): only
   * they can have rows to update, demote or remove. A page of new people skips those statements.
   */
  ids: string[];
}

/**
 * A page's smart-field values, one document per staged user (field id -> {value, integration_id}),
 * for the users that have any: what the new teammates' insert carries and the update sets.
 */
const STAGED_DOCUMENTS = `select sv.ext_id, jsonb_object_agg(sv.field_id::text, jsonb_build_object('value', sv.value, 'integration_id', $2::text)) as doc
                            from stage_values sv group by sv.ext_id`;

/** Each staged user's groups (stage_groups), sorted and without duplicates: `ext_id`, `ids`. */
const STAGED_GROUP_IDS = 'select ext_id, array_agg(distinct group_id order by group_id) as ids from stage_groups group by ext_id';

/** Teammates (new, revived, renamed; the new ones with their smart-field values) and the integration's source rows (the new ones with their groups). */
export async function mergeTeammates(client: pg.PoolClient, { workspaceId: w, integrationId: i, ids }: MergeContext): Promise<void> {
  if (ids.length) {
    await client.query(
      `update stage_users s set revived = true where not s.is_new and (select t.deleted_at from teammates t where t.id = s.teammate_id) is not null`,
    );
  }
  await client.query(
    `insert into teammates (id, workspace_id, display_name, given_name, family_name, shared_mailbox, field_values)
     select s.teammate_id, $1, coalesce(s.display_name, ''), s.given_name, s.family_name, coalesce(s.shared_mailbox, false), coalesce(d.doc, '{}')
       from stage_users s left join (${STAGED_DOCUMENTS}) d on d.ext_id = s.ext_id
      where s.is_new`,
    [w, i],
  );
  if (!ids.length) return upsertSources(client, w, i);
  await client.query(
    `with changed as (
       update teammates t set display_name = coalesce(s.display_name, ''), given_name = s.given_name,
              family_name = s.family_name, deleted_at = null, shared_mailbox = coalesce(s.shared_mailbox, t.shared_mailbox)
         from stage_users s
        where t.id = any($2::uuid[]) and t.id = s.teammate_id and not s.is_new and t.workspace_id = $1
          and (t.display_name, t.given_name, t.family_name, t.deleted_at, t.shared_mailbox)
              is distinct from (coalesce(s.display_name, ''), s.given_name, s.family_name, null::timestamptz, coalesce(s.shared_mailbox, t.shared_mailbox))
       returning t.id)
     insert into stage_changed select id from changed on conflict do nothing`,
    [w, ids],
  );
  await upsertSources(client, w, i);
}

async function upsertSources(client: pg.PoolClient, w: string, i: string): Promise<void> {
  // A new person's groups come with its source row (sorted, without duplicates); an existing
  // teammate's are compared and written by mergeMemberships, which reports the change.
  await client.query(
    `insert into teammate_sources (workspace_id, integration_id, external_id, teammate_id, photo_ref, fingerprint, group_ids)
     select $1, $2, s.ext_id, s.teammate_id, s.photo_ref, s.fingerprint, case when s.is_new then coalesce(g.ids, '{}') else '{}' end
       from stage_users s left join (${STAGED_GROUP_IDS}) g on g.ext_id = s.ext_id
     on conflict (integration_id, external_id) do update
        set teammate_id = excluded.teammate_id, photo_ref = excluded.photo_ref, fingerprint = excluded.fingerprint
      where (teammate_sources.teammate_id, teammate_sources.photo_ref, teammate_sources.fingerprint)
            is distinct from (excluded.teammate_id, excluded.photo_ref, excluded.fingerprint)`,
    [w, i],
  );
}

/**
 * Addresses: aliases another teammate holds are reported (and their user written again next time,
 * not skipped as unchanged); then primaries demoted, stale addresses dropped, the page's upserted.
 */
export async function mergeAddresses(
  client: pg.PoolClient,
  { workspaceId: w, integrationId: i, ids }: MergeContext,
): Promise<{ ext_id: string; address: string }[]> {
  const aliasDup = await client.query<{ ext_id: string; address: string }>(
    `delete from stage_emails se using stage_users s where se.ext_id = s.ext_id and se.holder <> s.teammate_id
      returning se.ext_id, se.address`,
  );
  if (aliasDup.rows.length)
    await forgetFingerprints(
      client,
      i,
      aliasDup.rows.map((r) => r.ext_id),
    );
  await client.query(`delete from stage_emails se where not exists (select 1 from stage_users s where s.ext_id = se.ext_id)`);
  if (ids.length) await dropStaleAddresses(client, i, ids);
  await client.query(
    `with up as (
       insert into emails (workspace_id, teammate_id, address, is_primary, integration_id)
       select distinct on (lower(se.address)) $1, s.teammate_id, se.address, se.is_primary, $2::uuid
         from stage_emails se join stage_users s on s.ext_id = se.ext_id
        order by lower(se.address), se.is_primary desc
       on conflict (workspace_id, lower(address)) do update
          set is_primary = excluded.is_primary, integration_id = excluded.integration_id, address = excluded.address
        where (emails.is_primary, emails.integration_id, emails.address)
              is distinct from (excluded.is_primary, excluded.integration_id, excluded.address)
       returning teammate_id)
     insert into stage_changed select distinct teammate_id from up where teammate_id = any($3::uuid[]) on conflict do nothing`,
    [w, i, ids],
  );
  return aliasDup.rows;
}

/** Existing teammates' primaries the directory moved are demoted; addresses it dropped go. */
async function dropStaleAddresses(client: pg.PoolClient, i: string, ids: string[]): Promise<void> {
  await client.query(
    `with demoted as (
       update emails e set is_primary = false
         from stage_users s
        where e.teammate_id = any($1::uuid[]) and e.teammate_id = s.teammate_id and e.is_primary and lower(e.address) <> lower(s.email)
       returning e.teammate_id)
     insert into stage_changed select teammate_id from demoted on conflict do nothing`,
    [ids],
  );
  await client.query(
    `with stale as (
       delete from emails e using stage_users s
        where e.teammate_id = any($2::uuid[]) and e.teammate_id = s.teammate_id and e.integration_id = $1
          and not exists (select 1 from stage_emails se where se.ext_id = s.ext_id and lower(se.address) = lower(e.address))
       returning e.teammate_id)
     insert into stage_changed select teammate_id from stale on conflict do nothing`,
    [i, ids],
  );
}

/**
 * The groups and org units this integration lists the page's existing teammates in, on their
 * source rows (`group_ids`, sorted, without duplicates; new people got theirs with their source
 * row). `kinds`: those whose memberships the page knows; ids of the other kind are kept. A source
 * is written only where its array differs, and its teammate is reported changed.
 */
export async function mergeMemberships(
  client: pg.PoolClient,
  { workspaceId: w, integrationId: i, ids }: MergeContext,
  kinds: readonly ('group' | 'org_unit')[],
): Promise<void> {
  if (!ids.length) return;
  // A page that knows both kinds replaces the array; one that knows a single kind keeps the other's ids.
  const whole = kinds.includes('group') && kinds.includes('org_unit');
  const kept = whole ? `'{}'::uuid[]` : `array(select k from unnest(ts.group_ids) k where (select gr.kind from groups gr where gr.id = k) <> all($3::text[]))`;
  await client.query(
    `with want as (
       select ts.external_id, (select coalesce(array_agg(distinct x order by x), '{}') from unnest(coalesce(g.ids, '{}') || ${kept}) x) as ids
         from stage_users s join teammate_sources ts on ts.integration_id = $2 and ts.external_id = s.ext_id
         left join (${STAGED_GROUP_IDS}) g on g.ext_id = s.ext_id
        where not s.is_new),
     changed as (
       update teammate_sources ts set group_ids = want.ids from want
        where ts.workspace_id = $1 and ts.integration_id = $2 and ts.external_id = want.external_id and ts.group_ids <> want.ids
       returning ts.teammate_id)
     insert into stage_changed select distinct teammate_id from changed on conflict do nothing`,
    whole ? [w, i] : [w, i, kinds],
  );
}

/**
 * Takes removed groups and org units of an integration (src/teammates/groups.ts deletes them) out of
 * its sources' arrays, so that no array keeps the id of a group that is gone.
 */
export async function forgetGroups(db: Queryable, workspaceId: string, integrationId: string, groupIds: readonly string[]): Promise<void> {
  if (!groupIds.length) return;
  await db.query(
    `update teammate_sources set group_ids = array(select x from unnest(group_ids) x where x <> all($3::uuid[]) order by x)
      where workspace_id = $1 and integration_id = $2 and group_ids && $3::uuid[]`,
    [workspaceId, integrationId, groupIds],
  );
}

/**
 * Smart-field values mapped from this integration onto the teammates the page had before (new ones
 * got theirs with their insert, mergeTeammates): each document gets what the directory has for the
 * mapped fields (`fieldIds`) and loses what it lacks; a teammate is updated only where it differs.
 */
export async function mergeValues(client: pg.PoolClient, { workspaceId: w, integrationId: i, ids }: MergeContext, fieldIds: string[]): Promise<void> {
  if (!ids.length) return;
  await client.query(
    `with want as (
       select s.teammate_id, coalesce(d.doc, '{}'::jsonb) as doc
         from stage_users s left join (${STAGED_DOCUMENTS}) d on d.ext_id = s.ext_id
        where not s.is_new
     ), changed as (
       update teammates t set field_values = (t.field_values - $4::text[]) || w.doc
         from want w
        where t.id = any($3::uuid[]) and t.id = w.teammate_id and t.workspace_id = $1
          and t.field_values is distinct from (t.field_values - $4::text[]) || w.doc
       returning t.id)
     insert into stage_changed select id from changed on conflict do nothing`,
    [w, i, ids, fieldIds],
  );
}

/** A source's groups, once the directory's memberships are known: the group ids, and the groups part of its fingerprint. */
export interface KnownGroups {
  ext_id: string;
  group_ids: string[];
  part: string;
}

/**
 * The groups of sources written before their groups were known (src/sync/pendingGroups.ts), in
 * one statement: each source's group ids are replaced (its org units kept) and the groups part of
 * its fingerprint set (`base.groups`), one new row version each. Answers the teammates whose
 * memberships changed.
 */
export async function mergeKnownGroups(db: Queryable, workspaceId: string, integrationId: string, sources: readonly KnownGroups[]): Promise<string[]> {
  if (!sources.length) return [];
  const { rows } = await db.query<{ teammate_id: string }>(
    `with want as (
       select ts.external_id, ts.teammate_id, x.part,
              (select coalesce(array_agg(distinct k order by k), '{}') from unnest(
                 x.group_ids || array(select k from unnest(ts.group_ids) k where (select gr.kind from groups gr where gr.id = k) <> 'group')) k) as ids,
              ts.group_ids as had
         from json_to_recordset($3::json) as x(ext_id text, group_ids uuid[], part text)
         join teammate_sources ts on ts.integration_id = $2 and ts.external_id = x.ext_id),
     written as (
       update teammate_sources ts
          set group_ids = w.ids, fingerprint = split_part(ts.fingerprint, '.', 1) || '.' || w.part
         from want w
        where ts.workspace_id = $1 and ts.integration_id = $2 and ts.external_id = w.external_id
       returning 1)
     select distinct w.teammate_id from want w where w.had <> w.ids`,
    [workspaceId, integrationId, JSON.stringify(sources)],
  );
  return rows.map((r) => r.teammate_id);
}

/** An alias that could not be added: its user is written again by the next run, not skipped as unchanged. */
export async function forgetFingerprints(db: Queryable, integrationId: string, externalIds: string[]): Promise<void> {
  await db.query('update teammate_sources set fingerprint = null where integration_id = $1 and external_id = any($2::text[])', [integrationId, externalIds]);
}

export interface Unlisted {
  teammate_id: string;
  external_id: string;
}

/** A teammate event's body for each teammate `where` selects (`t`: teammates; $1 is the workspace, $3 on are free). */
function teammateBodies(where: string): string {
  return `select jsonb_build_object(
                   'teammate', jsonb_build_object('uuid', t.id, 'display_name', t.display_name),
                   'emails', coalesce((select jsonb_agg(jsonb_build_object('uuid', e.id, 'address', e.address, 'primary', e.is_primary)
                                                         order by e.is_primary desc, e.address)
                                         from emails e where e.teammate_id = t.id), '[]'::jsonb)) as body
            from teammates t where t.workspace_id = $1 and ${where}`;
}

/**
 * Writes teammate.created or teammate.deleted for each of these teammates of the workspace, with
 * their addresses (primary first, then by address), in one statement. Answers the events' bodies.
 */
async function emitTeammateEvents(
  db: Queryable,
  workspaceId: string,
  type: 'teammate.created' | 'teammate.deleted',
  ids: readonly string[],
): Promise<TeammateEventBody[]> {
  if (!ids.length) return [];
  return emitEventsFrom(db, workspaceId, type, { sql: teammateBodies('t.id = any($3::uuid[])'), params: [ids] });
}

/**
 * teammate.created for the teammates the page being merged added or brought back (stage_users:
 * new or revived), with their addresses, in the page's transaction. Answers their ids.
 */
export async function announceCreated(client: pg.PoolClient, workspaceId: string): Promise<string[]> {
  const bodies = await emitEventsFrom(client, workspaceId, 'teammate.created', {
    sql: teammateBodies('t.id in (select s.teammate_id from stage_users s where s.is_new or s.revived)'),
    params: [],
  });
  return bodies.map((b) => b.teammate.uuid);
}

/**
 * Drops the sources, and soft-deletes the teammates no directory integration lists any more, with
 * teammate.deleted for each. Answers the ids of the teammates removed.
 */
export async function removeSources(client: pg.PoolClient, workspaceId: string, integrationId: string, unlisted: Unlisted[]): Promise<string[]> {
  await client.query('delete from teammate_sources where integration_id = $1 and external_id = any($2::text[])', [
    integrationId,
    unlisted.map((r) => r.external_id),
  ]);
  const removed = await client.query<{ id: string }>(
    `update teammates t set deleted_at = now()
      where t.workspace_id = $1 and t.id = any($2::uuid[]) and t.deleted_at is null
        and not exists (select 1 from teammate_sources ts where ts.teammate_id = t.id)
     returning t.id`,
    [workspaceId, unlisted.map((r) => r.teammate_id)],
  );
  return (
    await emitTeammateEvents(
      client,
      workspaceId,
      'teammate.deleted',
      removed.rows.map((r) => r.id),
    )
  ).map((b) => b.teammate.uuid);
}

/** Locks a live teammate for the rest of the transaction; false when there is none. */
export async function lockTeammate(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return !!(await db.query('select 1 from teammates where workspace_id = $1 and id = $2 and deleted_at is null for update', [workspaceId, id])).rowCount;
}

/**
 * Sets manual values (`value` null clears one) of fields no integration manages, on a teammate
 * locked by `lockTeammate`. Reinstalls the teammate when anything changed; answers whether it did.
 */
export async function setManualValues(
  db: Queryable,
  workspaceId: string,
  teammateId: string,
  values: readonly { fieldId: string; value: string | null }[],
): Promise<boolean> {
  const set = values.filter((v) => v.value !== null);
  const changed = await db.query(
    `update teammates t set field_values = (t.field_values - $3::text[]) || x.doc
       from (select coalesce(jsonb_object_agg(f, jsonb_build_object('value', v)), '{}') as doc from unnest($4::text[], $5::text[]) as u(f, v)) x
      where t.workspace_id = $1 and t.id = $2 and t.field_values is distinct from (t.field_values - $3::text[]) || x.doc`,
    [workspaceId, teammateId, values.map((v) => v.fieldId), set.map((v) => v.fieldId), set.map((v) => v.value)],
  );
  if (!changed.rowCount) return false;
  await requestTeammateInstalls(db, workspaceId, [teammateId]);
  return true;
}

/** Removes a teammate (soft delete) with teammate.deleted, and stops their installations. False when there is none. */
export async function removeTeammate(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    'update teammates set deleted_at = now() where workspace_id = $1 and id = $2 and deleted_at is null returning id',
    [workspaceId, id],
  );
  if (!rows.length) return false;
  const [body] = await emitTeammateEvents(db, workspaceId, 'teammate.deleted', [id]);
  await stopAddresses(db, workspaceId, body?.emails.map((e) => e.uuid) ?? []);
  return true;
}

/** Removes one address of a teammate and reinstalls the teammate. */
export async function removeEmail(db: Queryable, workspaceId: string, emailId: string, teammateId: string): Promise<void> {
  await db.query('delete from emails where workspace_id = $1 and id = $2', [workspaceId, emailId]);
  await requestTeammateInstalls(db, workspaceId, [teammateId]);
}

export interface PhotoFieldContext {
  workspaceId: string;
  /** The assets integration the photos come from. */
  integrationId: string;
  fieldIds: string[];
}

/**
 * Sets every photo field (`fieldIds`) of the given teammates to their photo's public URL (`url`),
 * and removes the value where they have none (null); teammates removed meanwhile are left alone.
 * Returns the teammates whose values changed.
 */
export async function setPhotoValues(db: Queryable, f: PhotoFieldContext, photos: readonly { teammateId: string; url: string | null }[]): Promise<string[]> {
  if (!f.fieldIds.length) return [];
  const { rows } = await db.query<{ teammate_id: string }>(
    `with want as (
       select x.teammate_id, case when x.url is null then '{}'::jsonb
                                  else (select jsonb_object_agg(f, jsonb_build_object('value', x.url, 'integration_id', $2::text)) from unnest($5::text[]) f)
                             end as doc
         from unnest($3::uuid[], $4::text[]) x(teammate_id, url)
     )
     update teammates t set field_values = (t.field_values - $5::text[]) || w.doc
       from want w
      where t.workspace_id = $1 and t.id = w.teammate_id and t.deleted_at is null
        and t.field_values is distinct from (t.field_values - $5::text[]) || w.doc
     returning t.id as teammate_id`,
    [f.workspaceId, f.integrationId, photos.map((p) => p.teammateId), photos.map((p) => p.url), f.fieldIds],
  );
  return rows.map((r) => r.teammate_id);
}
