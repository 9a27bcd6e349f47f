/**
 * Reads of the teammate aggregate for the API and the console (src/teammates/teammates.ts writes it):
 * a teammate with its addresses and values, lists, and what a removal checks first.
 */
import type { Queryable } from '../db/tx.ts';
import { listPage, type PageWindow } from '../db/pages.ts';
import { fieldIdsInValueOrder } from '../db/smartFields.ts';
import { firstConnectedDirectory, integrationSummary } from '../integrations/queries.ts';

export interface TeammateRow {
  id: string;
  display_name: string;
  emails: { id: string; address: string; primary: boolean }[];
  smart_field_values: { value: string; smart_field_id: string; integration_id: string | null; source: 'integration' | 'manual' }[];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `t.id, t.display_name, t.created_at, t.updated_at,
  coalesce((select jsonb_agg(jsonb_build_object('id', e.id, 'address', e.address, 'primary', e.is_primary) order by e.is_primary desc, e.address)
              from emails e where e.workspace_id = t.workspace_id and e.teammate_id = t.id), '[]'::jsonb) as emails,
  coalesce((select jsonb_agg(jsonb_build_object('value', v.value->>'value', 'smart_field_id', v.key, 'integration_id', v.value->'integration_id',
                                                'source', case when v.value ? 'integration_id' then 'integration' else 'manual' end))
              from jsonb_each(t.field_values) v), '[]'::jsonb) as smart_field_values`;

/** Lists each teammate's values in the order of their fields (position, then slug). */
async function inFieldOrder(db: Queryable, workspaceId: string, rows: TeammateRow[]): Promise<TeammateRow[]> {
  if (!rows.some((r) => r.smart_field_values.length > 1)) return rows;
  const order = new Map((await fieldIdsInValueOrder(db, workspaceId)).map((id, i) => [id, i]));
  for (const r of rows) r.smart_field_values.sort((a, b) => order.get(a.smart_field_id)! - order.get(b.smart_field_id)!);
  return rows;
}

/** A teammate that is not removed, with its addresses (primary first) and its values. */
export async function getTeammate(db: Queryable, workspaceId: string, id: string): Promise<TeammateRow | undefined> {
  const { rows } = await db.query<TeammateRow>(`select ${COLUMNS} from teammates t where t.workspace_id = $1 and t.id = $2 and t.deleted_at is null`, [
    workspaceId,
    id,
  ]);
  return (await inFieldOrder(db, workspaceId, rows))[0];
}

/** Active teammates: the seats the workspace uses. */
export async function activeTeammateCount(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId]);
  return rows[0]?.n ?? 0;
}

/** The display name of each id among `ids` that is a teammate of the workspace, removed or not. */
export async function teammateNames(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; display_name: string }>(
    'select id, display_name from teammates where workspace_id = $1 and id = any($2::uuid[])',
    [workspaceId, ids],
  );
  return new Map(rows.map((r) => [r.id, r.display_name]));
}

/** The addresses of the teammates among `ids` that are removed (their installations stop). */
export async function addressesOfRemoved(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  if (!ids.length) return [];
  const { rows } = await db.query<{ id: string }>(
    `select e.id from emails e join teammates t on t.id = e.teammate_id
      where e.workspace_id = $1 and t.id = any($2::uuid[]) and t.deleted_at is not null`,
    [workspaceId, ids],
  );
  return rows.map((r) => r.id);
}

/** The teammates in any of the given groups or org units (each once). */
export async function membersOfGroups(db: Queryable, workspaceId: string, groupIds: readonly string[]): Promise<string[]> {
  if (!groupIds.length) return [];
  const { rows } = await db.query<{ id: string }>(
    'select distinct teammate_id as id from teammate_sources where workspace_id = $1 and group_ids && $2::uuid[]',
    [workspaceId, groupIds],
  );
  return rows.map((r) => r.id);
}

/** Teammates that are not removed, newest first. */
export async function listTeammates(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: TeammateRow[]; total: number }> {
  const listed = await listPage<TeammateRow>(
    db,
    workspaceId,
    page,
    COLUMNS,
    'from teammates t where t.workspace_id = $1 and t.deleted_at is null',
    't.created_at desc, t.id desc',
  );
  return { ...listed, rows: await inFieldOrder(db, workspaceId, listed.rows) };
}

/** The ids among `ids` that are teammates of the workspace, not removed. */
export async function existingTeammateIds(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('select id from teammates where workspace_id = $1 and id = any($2::uuid[]) and deleted_at is null', [
    workspaceId,
    ids,
  ]);
  return new Set(rows.map((r) => r.id));
}

/** The connected directory integration that lists a teammate (an active one first), if any. */
export async function directoryOfTeammate(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<{ id: string; name: string; status: string; dashboard_url: string | null } | undefined> {
  const { rows } = await db.query<{ integration_id: string }>(
    `select ts.integration_id from teammate_sources ts
       join teammates t on t.workspace_id = ts.workspace_id and t.id = ts.teammate_id and t.deleted_at is null
      where ts.workspace_id = $1 and ts.teammate_id = $2`,
    [workspaceId, id],
  );
  return rows.length
    ? firstConnectedDirectory(
        db,
        workspaceId,
        rows.map((r) => r.integration_id),
      )
    : undefined;
}

export interface EmailForRemoval {
  teammate_id: string;
  is_primary: boolean;
  integration_id: string | null;
  integration_status: string | null;
  dashboard_url: string | null;
}

/** Locks an address of a teammate that is not removed (in the caller's transaction), with the integration that manages it. */
export async function lockEmailForRemoval(db: Queryable, workspaceId: string, emailId: string): Promise<EmailForRemoval | undefined> {
  const { rows } = await db.query<{ teammate_id: string; is_primary: boolean; integration_id: string | null }>(
    `select e.teammate_id, e.is_primary, e.integration_id
       from emails e join teammates t on t.workspace_id = e.workspace_id and t.id = e.teammate_id and t.deleted_at is null
      where e.workspace_id = $1 and e.id = $2 for update of e`,
    [workspaceId, emailId],
  );
  const e = rows[0];
  if (!e) return undefined;
  const i = e.integration_id ? await integrationSummary(db, workspaceId, e.integration_id) : undefined;
  return { ...e, integration_status: i?.status ?? null, dashboard_url: i?.dashboard_url ?? null };
}

/** Addresses containing `q` (lower case), with their teammate's name, in address order. */
export async function searchAddresses(db: Queryable, workspaceId: string, q: string, limit: number): Promise<{ address: string; display_name: string }[]> {
  const { rows } = await db.query<{ address: string; display_name: string }>(
    `select e.address, t.display_name from emails e join teammates t on t.workspace_id = e.workspace_id and t.id = e.teammate_id
      where e.workspace_id = $1 and strpos(lower(e.address), $2) > 0 order by e.address limit $3`,
    [workspaceId, q, limit],
  );
  return rows;
}

/** How many smart-field values the workspace's teammates hold (directory-mapped, by hand and photos). */
export async function smartFieldValueCount(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select coalesce(sum((select count(*) from jsonb_object_keys(t.field_values))), 0)::int as n from teammates t where t.workspace_id = $1`,
    [workspaceId],
  );
  return rows[0]!.n;
}

/**
 * Each of these smart fields' longest value in the workspace (of equal lengths, the lowest teammate
 * id's); a field without values is absent. No index serves it (the values are keys of each
 * teammate's document): one pass over the workspace's teammates per field.
 */
export async function longestValues(
  db: Queryable,
  workspaceId: string,
  smartFieldIds: readonly string[],
): Promise<{ smart_field_id: string; value: string }[]> {
  const { rows } = await db.query<{ smart_field_id: string; value: string }>(
    `select f.id as smart_field_id, l.value from unnest($2::text[]) as f(id)
      cross join lateral (select t.field_values->f.id->>'value' as value from teammates t where t.workspace_id = $1 and t.field_values ? f.id
                           order by length(t.field_values->f.id->>'value') desc, t.id limit 1) l`,
    [workspaceId, smartFieldIds],
  );
  return rows;
}

/**
 * The integration's sources among `externalIds`, with their teammate, fingerprint and the addresses
 * the integration gave the teammate.
 */
export async function sourcesOf(
  db: Queryable,
  integrationId: string,
  externalIds: readonly string[],
): Promise<Map<string, { teammate_id: string; fingerprint: string | null; emails: string[] }>> {
  const { rows } = await db.query<{ external_id: string; teammate_id: string; fingerprint: string | null; emails: string[] }>(
    `select ts.external_id, ts.teammate_id, ts.fingerprint,
            coalesce((select array_agg(e.address) from emails e where e.teammate_id = ts.teammate_id and e.integration_id = $1), '{}') as emails
       from teammate_sources ts
      where ts.integration_id = $1 and ts.external_id = any($2::text[])`,
    [integrationId, externalIds],
  );
  return new Map(rows.map(({ external_id, ...r }) => [external_id, r]));
}

/** The teammates of the integration's sources among `externalIds`: external id -> teammate id. */
export async function sourceTeammates(db: Queryable, workspaceId: string, integrationId: string, externalIds: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ external_id: string; teammate_id: string }>(
    'select external_id, teammate_id from teammate_sources where workspace_id = $1 and integration_id = $2 and external_id = any($3::text[])',
    [workspaceId, integrationId, externalIds],
  );
  return new Map(rows.map((r) => [r.external_id, r.teammate_id]));
}

/** How many directory sources the integration has. */
export async function countSources(db: Queryable, integrationId: string): Promise<number> {
  return (await db.query<{ n: number }>('select count(*)::int as n from teammate_sources where integration_id = $1', [integrationId])).rows[0]!.n;
}
