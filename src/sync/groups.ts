/**
 * An integration's groups and org units, as its directory lists them: upserted before the users
 * pages, and those the directory no longer has removed (with their memberships and assignments).
 */
import type pg from 'pg';
import type { DirectoryGroup } from '../../connectors/types.ts';
import { withTx } from '../db/tx.ts';

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
    // Groups the directory no longer has go, with their memberships and assignments.
    await client.query(
      `delete from groups g where g.integration_id = $1
          and not exists (select 1 from unnest($2::text[], $3::text[]) x(kind, ext) where x.kind = g.kind and x.ext = g.external_id)`,
      [integration.id, groups.map((g) => g.kind), groups.map((g) => g.externalId)],
    );
    const all = await client.query<{ id: string; external_id: string }>('select id, external_id from groups where integration_id = $1', [integration.id]);
    return new Map(all.rows.map((r) => [r.external_id, r.id]));
  });
}
