/**
 * Writes one page of directory users in one transaction, set-based: the page goes into a staging
 * table, and a fixed number of statements upsert teammates, sources, emails, memberships and
 * smart-field values from it. Rows are updated only where they differ (IS DISTINCT FROM), so an
 * unchanged directory writes nothing but the run's bookkeeping.
 */
import type pg from 'pg';
import type { DirectoryUser } from '../../connectors/types.ts';
import { teammatePayloadSql } from '../events/outbox.ts';
import { attribute, fingerprint } from './fingerprint.ts';
import { KIND_EXPECTS, valueFitsKind, type SmartFieldKind } from '../render/kinds.ts';

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
      teammate_id uuid, holder uuid, is_new boolean not null default false, revived boolean not null default false
    ) on commit delete rows;
    create temp table if not exists stage_emails (ext_id text, address text, is_primary boolean, holder uuid) on commit delete rows;
    create temp table if not exists stage_values (ext_id text, field_id uuid, value text) on commit delete rows;
    create temp table if not exists stage_groups (ext_id text, group_id uuid) on commit delete rows;
    create temp table if not exists stage_changed (teammate_id uuid primary key) on commit delete rows;
  `);
}

/** Records who a run saw, as active or as removed, for the removals after a complete listing. */
async function recordSeen(client: pg.PoolClient, runId: string, active: string[], removed: string[]): Promise<void> {
  await client.query(
    `insert into sync_run_seen (run_id, external_id, removed)
     select $1::uuid, x, false from unnest($2::text[]) x
     union all select $1::uuid, x, true from unnest($3::text[]) x
     on conflict (run_id, external_id) do update set removed = excluded.removed`,
    [runId, active, removed],
  );
}

export async function writePage(client: pg.PoolClient, ctx: PageContext, users: DirectoryUser[], removedIds: string[]): Promise<PageResult> {
  await ensureStaging(client);
  const errors: RunErrorDetail[] = [];
  let skipped = 0;

  // In-page checks: users without an address are skipped; an address used twice keeps its first user.
  let active: DirectoryUser[] = [];
  const removed = new Set(removedIds);
  const seenEmails = new Map<string, string>();
  // A user listed twice in one page (incremental listings may repeat one) counts once, last wins.
  const latest = new Map(users.map((u) => [u.externalId, u]));
  for (const u of latest.values()) {
    if (u.removed) {
      removed.add(u.externalId);
      continue;
    }
    if (!u.primaryEmail) {
      skipped++;
      continue;
    }
    const e = norm(u.primaryEmail);
    const owner = seenEmails.get(e);
    if (owner !== undefined) {
      errors.push({ externalId: u.externalId, email: u.primaryEmail, message: `email ${u.primaryEmail} also belongs to directory user ${owner}; skipped` });
      continue;
    }
    seenEmails.set(e, u.externalId);
    active.push(u);
  }

  // Unchanged users (same fingerprint as stored) are only recorded as seen. The kinds are part of
  // the signature: values stored before they were checked by kind are written once more, checked.
  const fieldsSignature = ctx.fields.map((f) => `${f.id}=${f.attribute}:${f.kind}`).join(',');
  const fingerprints = new Map(active.map((u) => [u.externalId, fingerprint(u, ctx.fields, ctx.groupIds, fieldsSignature)]));
  let unchanged: string[] = [];
  if (ctx.category === 'teammates' && active.length) {
    const { rows } = await client.query<{ ext_id: string }>(
      `select x.ext_id from unnest($2::text[], $3::text[]) x(ext_id, fingerprint)
        where x.fingerprint = (select ts.fingerprint from teammate_sources ts join teammates t on t.id = ts.teammate_id and t.deleted_at is null
                                where ts.integration_id = $1 and ts.external_id = x.ext_id)`,
      [ctx.integrationId, [...fingerprints.keys()], [...fingerprints.values()]],
    );
    unchanged = rows.map((r) => r.ext_id);
    const same = new Set(unchanged);
    active = active.filter((u) => !same.has(u.externalId));
  }

  if (!active.length) {
    await recordSeen(client, ctx.runId, unchanged, [...removed]);
    return { seen: unchanged.length, created: 0, updated: 0, unchanged: unchanged.length, skipped, errors, changedTeammateIds: [], unchangedExternalIds: unchanged };
  }

  const emailRows: [string, string, boolean][] = [];
  const valueRows: [string, string, string][] = [];
  const groupRows: [string, string][] = [];
  for (const u of active) {
    emailRows.push([u.externalId, u.primaryEmail!.trim(), true]);
    for (const a of new Set(u.aliases.map((x) => x.trim()).filter((x) => x && norm(x) !== norm(u.primaryEmail!)))) {
      emailRows.push([u.externalId, a, false]);
    }
    for (const f of ctx.fields) {
      const v = attribute(u, f.attribute);
      if (v === undefined || v === '') continue;
      // A value its field's kind refuses (a url field holding `javascript:...`) is left empty, as if
      // the directory had none, and reported on the run (without the value itself).
      if (valueFitsKind(f.kind, v)) valueRows.push([u.externalId, f.id, v]);
      else errors.push({ externalId: u.externalId, email: u.primaryEmail!, message: `${f.attribute}: the value is not ${KIND_EXPECTS[f.kind]}; left empty` });
    }
    for (const g of new Set([...u.groups, ...u.orgUnits])) {
      const id = ctx.groupIds.get(g);
      if (id) groupRows.push([u.externalId, id]);
    }
  }

  const w = ctx.workspaceId;
  const i = ctx.integrationId;
  await client.query(
    `insert into stage_users (ext_id, display_name, given_name, family_name, email, photo_ref, fingerprint)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])`,
    [
      active.map((u) => u.externalId),
      active.map((u) => u.displayName),
      active.map((u) => u.givenName),
      active.map((u) => u.familyName),
      active.map((u) => u.primaryEmail!.trim()),
      active.map((u) => (u.photo ? (u.photo.etag ?? u.photo.url ?? null) : null)),
      active.map((u) => fingerprints.get(u.externalId)!),
    ],
  );
  await client.query(`insert into stage_emails (ext_id, address, is_primary) select * from unnest($1::text[], $2::text[], $3::boolean[])`, [
    emailRows.map((r) => r[0]),
    emailRows.map((r) => r[1]),
    emailRows.map((r) => r[2]),
  ]);
  await client.query(`insert into stage_values select * from unnest($1::text[], $2::uuid[], $3::text[])`, [
    valueRows.map((r) => r[0]),
    valueRows.map((r) => r[1]),
    valueRows.map((r) => r[2]),
  ]);
  await client.query(`insert into stage_groups select * from unnest($1::text[], $2::uuid[])`, [groupRows.map((r) => r[0]), groupRows.map((r) => r[1])]);
  // A page is a few hundred rows; the directory tables can hold millions. Every lookup into them
  // below is a correlated subquery on a unique index or an `= any(ids)` on an indexed column, so each
  // page costs index probes for its own rows instead of a hash join over the whole workspace, which
  // made every page slower than the last. (The engine keeps their statistics fresh: stats.ts.)
  // Who is who: the source row for this integration, else an existing teammate with the address.
  await client.query(
    `update stage_users s set
        teammate_id = (select ts.teammate_id from teammate_sources ts where ts.integration_id = $2 and ts.external_id = s.ext_id),
        holder = (select e.teammate_id from emails e where e.workspace_id = $1 and lower(e.address) = lower(s.email))`,
    [w, i],
  );
  await client.query(
    `update stage_emails se set holder = (select e.teammate_id from emails e where e.workspace_id = $1 and lower(e.address) = lower(se.address))`,
    [w],
  );
  await client.query(
    `update stage_users s set teammate_id = s.holder
      where s.teammate_id is null and s.holder is not null
        and ($2 = 'smart_fields' or (select 1 from teammate_sources ts where ts.teammate_id = s.holder and ts.integration_id = $1 limit 1) is null)`,
    [i, ctx.category],
  );

  // An address held by another teammate is reported on the run, and that user skipped.
  const dup = await client.query<{ ext_id: string; email: string }>(
    `delete from stage_users s where s.holder is not null and (s.teammate_id is null or s.holder <> s.teammate_id)
      returning s.ext_id, s.email`,
  );
  for (const d of dup.rows) errors.push({ externalId: d.ext_id, email: d.email, message: `email ${d.email} already belongs to another teammate; skipped` });

  if (ctx.category === 'smart_fields') {
    // A smart-field source never creates or deletes teammates; users it cannot match are skipped.
    const unmatched = await client.query(`delete from stage_users where teammate_id is null`);
    skipped += unmatched.rowCount ?? 0;
  } else {
    await client.query(`update stage_users s set teammate_id = gen_random_uuid(), is_new = true where s.teammate_id is null`);
  }
  const written = (await client.query<{ ext_id: string; teammate_id: string }>('select ext_id, teammate_id from stage_users')).rows;
  const ids = written.map((r) => r.teammate_id);

  if (ctx.category === 'teammates') {
    await client.query(
      `update stage_users s set revived = true where not s.is_new and (select t.deleted_at from teammates t where t.id = s.teammate_id) is not null`,
    );
    await client.query(
      `insert into teammates (id, workspace_id, display_name, given_name, family_name)
       select teammate_id, $1, coalesce(display_name, ''), given_name, family_name from stage_users where is_new`,
      [w],
    );
    await client.query(
      `with changed as (
         update teammates t set display_name = coalesce(s.display_name, ''), given_name = s.given_name,
                family_name = s.family_name, deleted_at = null
           from stage_users s
          where t.id = any($2::uuid[]) and t.id = s.teammate_id and not s.is_new and t.workspace_id = $1
            and (t.display_name, t.given_name, t.family_name, t.deleted_at)
                is distinct from (coalesce(s.display_name, ''), s.given_name, s.family_name, null::timestamptz)
         returning t.id)
       insert into stage_changed select id from changed on conflict do nothing`,
      [w, ids],
    );
    await client.query(
      `insert into teammate_sources (workspace_id, integration_id, external_id, teammate_id, photo_ref, fingerprint)
       select $1, $2, ext_id, teammate_id, photo_ref, fingerprint from stage_users
       on conflict (integration_id, external_id) do update
          set teammate_id = excluded.teammate_id, photo_ref = excluded.photo_ref, fingerprint = excluded.fingerprint
        where (teammate_sources.teammate_id, teammate_sources.photo_ref, teammate_sources.fingerprint)
              is distinct from (excluded.teammate_id, excluded.photo_ref, excluded.fingerprint)`,
      [w, i],
    );

    // Emails: aliases already held by someone else are reported; then demote, drop stale, upsert.
    const aliasDup = await client.query<{ ext_id: string; address: string }>(
      `delete from stage_emails se using stage_users s where se.ext_id = s.ext_id and se.holder <> s.teammate_id
        returning se.ext_id, se.address`,
    );
    for (const d of aliasDup.rows) errors.push({ externalId: d.ext_id, email: d.address, message: `alias ${d.address} already belongs to another teammate; not added` });
    // A user written only in part is written again next time, not skipped as unchanged.
    if (aliasDup.rows.length) {
      await client.query('update teammate_sources set fingerprint = null where integration_id = $1 and external_id = any($2::text[])', [i, aliasDup.rows.map((r) => r.ext_id)]);
    }
    await client.query(`delete from stage_emails se where not exists (select 1 from stage_users s where s.ext_id = se.ext_id)`);
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
       insert into stage_changed select teammate_id from up on conflict do nothing`,
      [w, i],
    );

    // Memberships in this integration's groups and org units.
    await client.query(
      `with gone as (
         delete from memberships m using stage_users s, groups g
          where m.teammate_id = any($2::uuid[]) and m.teammate_id = s.teammate_id and g.id = m.group_id and g.integration_id = $1
            and not exists (select 1 from stage_groups sg where sg.ext_id = s.ext_id and sg.group_id = m.group_id)
         returning m.teammate_id)
       insert into stage_changed select teammate_id from gone on conflict do nothing`,
      [i, ids],
    );
    await client.query(
      `with added as (
         insert into memberships (workspace_id, group_id, teammate_id)
         select distinct $1::uuid, sg.group_id, s.teammate_id from stage_groups sg join stage_users s on s.ext_id = sg.ext_id
         on conflict do nothing returning teammate_id)
       insert into stage_changed select teammate_id from added on conflict do nothing`,
      [w],
    );
  }

  // Smart-field values mapped from this integration: set what the directory has, clear what it lacks.
  if (ctx.fields.length) {
    await client.query(
      `with up as (
         insert into smart_field_values (workspace_id, teammate_id, smart_field_id, value, integration_id, source)
         select $1, s.teammate_id, sv.field_id, sv.value, $2, 'integration'
           from stage_values sv join stage_users s on s.ext_id = sv.ext_id
         on conflict (teammate_id, smart_field_id) do update
            set value = excluded.value, integration_id = excluded.integration_id, source = 'integration'
          where (smart_field_values.value, smart_field_values.integration_id, smart_field_values.source)
                is distinct from (excluded.value, excluded.integration_id, excluded.source)
         returning teammate_id)
       insert into stage_changed select teammate_id from up on conflict do nothing`,
      [w, i],
    );
    await client.query(
      `with cleared as (
         delete from smart_field_values v using stage_users s
          where v.teammate_id = any($2::uuid[]) and v.teammate_id = s.teammate_id and v.smart_field_id = any($1::uuid[])
            and not exists (select 1 from stage_values sv where sv.ext_id = s.ext_id and sv.field_id = v.smart_field_id)
         returning v.teammate_id)
       insert into stage_changed select teammate_id from cleared on conflict do nothing`,
      [ctx.fields.map((f) => f.id), ids],
    );
  }

  // Bookkeeping: who this run saw, as active or removed.
  await recordSeen(client, ctx.runId, [...unchanged, ...written.map((r) => r.ext_id)], [...removed]);

  // teammate.created for new and returning teammates, with their addresses, in this transaction.
  const created = await client.query<{ teammate_id: string }>(
    `insert into events (workspace_id, type, payload)
     select $1, 'teammate.created', ${teammatePayloadSql('teammate.created')}
       from stage_users s join teammates t on t.id = s.teammate_id
      where t.id = any($2::uuid[]) and (s.is_new or s.revived)
     returning (payload->'teammate'->>'uuid') as teammate_id`,
    [w, ids],
  );
  const createdIds = new Set(created.rows.map((r) => r.teammate_id));

  const changed = await client.query<{ teammate_id: string }>(
    `select s.teammate_id from stage_users s
      where s.is_new or s.revived or exists (select 1 from stage_changed c where c.teammate_id = s.teammate_id)`,
  );
  const changedTeammateIds = changed.rows.map((r) => r.teammate_id);
  const stagedCount = written.length;
  const updated = changedTeammateIds.filter((id) => !createdIds.has(id)).length;
  return {
    seen: stagedCount + unchanged.length,
    created: createdIds.size,
    updated,
    unchanged: stagedCount - createdIds.size - updated + unchanged.length,
    skipped,
    errors,
    changedTeammateIds,
    unchangedExternalIds: unchanged,
  };
}
