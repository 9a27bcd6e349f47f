/**
 * An integration's groups and org units, as its directory lists them: upserted before the users
 * pages, and those the directory no longer has removed (with their assignments, and from the
 * teammates' sources: teammates.ts forgetGroups).
 */
import type pg from 'pg';
import type { DirectoryGroup } from '../../connectors/types.ts';
import { withTx, type Queryable } from '../db/tx.ts';
import { listPage, type PageWindow } from '../db/pages.ts';
import { forgetGroups } from './teammates.ts';

/** Writes the integration's groups; answers external id -> groups.id. */
export async function syncGroups(pool: pg.Pool, integration: { id: string; workspace_id: string }, groups: DirectoryGroup[]): Promise<Map<string, string>> {
  return withTx(pool, async (client) => {
    await client.query(
      `insert into groups (workspace_id, integration_id, kind, external_id, name, email, path)
       select $1, $2, * from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
       on conflict (integration_id, kind, external_id) do update
          set name = excluded.name, email = excluded.email, path = excluded.path
        where (groups.name, groups.email, groups.path) is distinct from (excluded.name, excluded.email, excluded.path)
`,
      [
        integration.workspace_id,
        integration.id,
        groups.map((g) => g.kind),
        groups.map((g) => g.externalId),
        groups.map((g) => g.name),
        groups.map((g) => g.email ?? null),
        groups.map((g) => g.path ?? null),
      ],
    );
    // Groups the directory no longer has go, with their assignments, and out of the sources' arrays.
    const gone = await client.query<{ id: string }>(
      `delete from groups g where g.integration_id = $1
          and not exists (select 1 from unnest($2::text[], $3::text[]) x(kind, ext) where x.kind = g.kind and x.ext = g.external_id)
       returning g.id`,
      [integration.id, groups.map((g) => g.kind), groups.map((g) => g.externalId)],
    );
    await forgetGroups(
      client,
      integration.workspace_id,
      integration.id,
      gone.rows.map((r) => r.id),
    );
    const all = await client.query<{ id: string; external_id: string }>('select id, external_id from groups where integration_id = $1', [integration.id]);
    return new Map(all.rows.map((r) => [r.external_id, r.id]));
  });
}

export interface GroupRow {
  id: string;
  kind: 'group' | 'org_unit';
  name: string;
  email: string | null;
  path: string | null;
  integration_id: string;
  member_count: number;
  created_at: Date;
  updated_at: Date;
}

const GROUP_COLUMNS = 'g.id, g.kind, g.name, g.email, g.path, g.integration_id, g.created_at, g.updated_at';

/** The workspace's groups and org units (or those of one kind) with their member counts, newest first. */
export async function listGroups(
  db: Queryable,
  workspaceId: string,
  page: PageWindow,
  kind?: 'group' | 'org_unit',
): Promise<{ rows: GroupRow[]; total: number }> {
  const from = `from groups g where g.workspace_id = $1${kind ? ` and g.kind = '${kind}'` : ''}`;
  const listed = await listPage<Omit<GroupRow, 'member_count'>>(db, workspaceId, page, GROUP_COLUMNS, from, 'g.created_at desc, g.id desc');
  const counts = await memberCounts(
    db,
    workspaceId,
    listed.rows.map((r) => r.id),
  );
  return { total: listed.total, rows: listed.rows.map((r) => ({ ...r, member_count: counts.get(r.id) ?? 0 })) };
}

/**
 * How many teammates each of these groups has, in one statement: the sources that list them in it
 * (a teammate has one source per integration, and a group belongs to one integration).
 */
async function memberCounts(db: Queryable, workspaceId: string, groupIds: readonly string[]): Promise<Map<string, number>> {
  if (!groupIds.length) return new Map();
  const { rows } = await db.query<{ id: string; n: number }>(
    `select x.id, count(*)::int as n
       from teammate_sources ts cross join unnest(ts.group_ids) as x(id)
      where ts.workspace_id = $1 and ts.group_ids && $2::uuid[] and x.id = any($2::uuid[])
      group by x.id`,
    [workspaceId, groupIds],
  );
  return new Map(rows.map((r) => [r.id, r.n]));
}

/** The kind of each id among `ids` that is a group or org unit of the workspace. */
export async function groupKinds(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; kind: string }>('select id, kind from groups where workspace_id = $1 and id = any($2::uuid[])', [
    workspaceId,
    ids,
  ]);
  return new Map(rows.map((r) => [r.id, r.kind]));
}

/** The ids of the workspace's groups (kind `group`) with these names, ordered by name. */
export async function groupIdsNamed(db: Queryable, workspaceId: string, names: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(`select id from groups where workspace_id = $1 and kind = 'group' and name = any($2::text[]) order by name`, [
    workspaceId,
    names,
  ]);
  return rows.map((r) => r.id);
}

/** The name of each id among `ids` that is a group or org unit of the workspace. */
export async function groupNames(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ id: string; name: string }>('select id, name from groups where workspace_id = $1 and id = any($2::uuid[])', [
    workspaceId,
    ids,
  ]);
  return new Map(rows.map((r) => [r.id, r.name]));
}
