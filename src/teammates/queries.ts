/**
 * Reads of the teammate aggregate for the API and the console (src/teammates/teammates.ts writes it):
 * a teammate with its addresses and values, lists, and what a removal checks first.
 */
import type { Queryable } from '../db/tx.ts';
import { listPage, type PageWindow } from '../db/pages.ts';

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
  coalesce((select jsonb_agg(jsonb_build_object('value', v.value, 'smart_field_id', v.smart_field_id, 'integration_id', v.integration_id, 'source', v.source)
                             order by f.position, f.slug)
              from smart_field_values v join smart_fields f on f.workspace_id = v.workspace_id and f.id = v.smart_field_id
             where v.workspace_id = t.workspace_id and v.teammate_id = t.id), '[]'::jsonb) as smart_field_values`;

/** A teammate that is not removed, with its addresses (primary first) and its values. */
export async function getTeammate(db: Queryable, workspaceId: string, id: string): Promise<TeammateRow | undefined> {
  const { rows } = await db.query<TeammateRow>(`select ${COLUMNS} from teammates t where t.workspace_id = $1 and t.id = $2 and t.deleted_at is null`, [workspaceId, id]);
  return rows[0];
}

/** Active teammates: the seats the workspace uses. */
export async function activeTeammateCount(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId]);
  return rows[0]?.n ?? 0;
}

/** The display name of each id among `ids` that is a teammate of the workspace, removed or not. */
export async function teammateNames(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; display_name: string }>('select id, display_name from teammates where workspace_id = $1 and id = any($2::uuid[])', [workspaceId, ids]);
  return new Map(rows.map((r) => [r.id, r.display_name]));
}

/** The teammates in any of the given groups or org units (each once). */
export async function membersOfGroups(db: Queryable, workspaceId: string, groupIds: readonly string[]): Promise<string[]> {
  if (!groupIds.length) return [];
  const { rows } = await db.query<{ id: string }>('select distinct teammate_id as id from memberships where workspace_id = $1 and group_id = any($2::uuid[])', [workspaceId, groupIds]);
  return rows.map((r) => r.id);
}

/** Teammates that are not removed, newest first. */
export function listTeammates(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: TeammateRow[]; total: number }> {
  return listPage<TeammateRow>(db, workspaceId, page, COLUMNS, 'from teammates t where t.workspace_id = $1 and t.deleted_at is null', 't.created_at desc, t.id desc');
}

/** The ids among `ids` that are teammates of the workspace, not removed. */
export async function existingTeammateIds(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>('select id from teammates where workspace_id = $1 and id = any($2::uuid[]) and deleted_at is null', [workspaceId, ids]);
  return new Set(rows.map((r) => r.id));
}

/** The connected directory integration that lists a teammate (an active one first), if any. */
export async function directoryOfTeammate(db: Queryable, workspaceId: string, id: string): Promise<{ id: string; name: string; status: string; dashboard_url: string | null } | undefined> {
  const { rows } = await db.query<{ id: string; name: string; status: string; dashboard_url: string | null }>(
    `select i.id, i.name, i.status, i.dashboard_url from teammate_sources ts
       join integrations i on i.workspace_id = ts.workspace_id and i.id = ts.integration_id
       join teammates t on t.workspace_id = ts.workspace_id and t.id = ts.teammate_id and t.deleted_at is null
      where ts.workspace_id = $1 and ts.teammate_id = $2 and i.category = 'teammates' and i.status <> 'disconnected'
      order by (i.status = 'active') desc, i.created_at limit 1`,
    [workspaceId, id],
  );
  return rows[0];
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
  const { rows } = await db.query<EmailForRemoval>(
    `select e.teammate_id, e.is_primary, e.integration_id, i.status as integration_status, i.dashboard_url
       from emails e join teammates t on t.workspace_id = e.workspace_id and t.id = e.teammate_id and t.deleted_at is null
       left join integrations i on i.workspace_id = e.workspace_id and i.id = e.integration_id
      where e.workspace_id = $1 and e.id = $2 for update of e`,
    [workspaceId, emailId],
  );
  return rows[0];
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
