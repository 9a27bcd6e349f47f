/**
 * Reads of integrations and their sync runs for the API and the console (src/integrations/repository.ts
 * and syncRuns.ts write them).
 */
import type { Queryable } from '../db/tx.ts';
import type { PageWindow } from '../db/pages.ts';
import { DIRECTORY_CATEGORIES } from '../domain.ts';
import type { IntegrationRow } from './repository.ts';
import type { SyncRunRow } from './syncRuns.ts';

/** The workspace's integrations that are not disconnected, newest first. */
export async function listIntegrations(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: IntegrationRow[]; total: number }> {
  const { rows } = await db.query<IntegrationRow & { total: number }>(
    `select *, count(*) over () as total from integrations
      where workspace_id = $1 and status <> 'disconnected'
      order by created_at desc, id desc limit $2 offset $3`,
    [workspaceId, page.limit, page.offset],
  );
  const total = rows[0]?.total ?? (await db.query<{ n: number }>(`select count(*)::int as n from integrations where workspace_id = $1 and status <> 'disconnected'`, [workspaceId])).rows[0]!.n;
  return { rows, total };
}

/** What a link to an integration checks: its category, status and names. */
export async function integrationSummary(db: Queryable, workspaceId: string, id: string): Promise<{ id: string; category: string; status: string; dashboard_url: string | null; name: string } | undefined> {
  const { rows } = await db.query<{ id: string; category: string; status: string; dashboard_url: string | null; name: string }>(
    'select id, category, status, dashboard_url, name from integrations where workspace_id = $1 and id = $2',
    [workspaceId, id],
  );
  return rows[0];
}

/** Of the integrations `ids`, the first connected directory (teammates) integration: an active one first, then the oldest. */
export async function firstConnectedDirectory(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<{ id: string; name: string; status: string; dashboard_url: string | null } | undefined> {
  const { rows } = await db.query<{ id: string; name: string; status: string; dashboard_url: string | null }>(
    `select i.id, i.name, i.status, i.dashboard_url from integrations i
      where i.workspace_id = $1 and i.id = any($2::uuid[]) and i.category = 'teammates' and i.status <> 'disconnected'
      order by (i.status = 'active') desc, i.created_at limit 1`,
    [workspaceId, ids],
  );
  return rows[0];
}

/** The ids of the workspace's integrations of a provider kind and category; `active`: only those active and activated (and `id` only). */
export async function integrationIdsOfKind(db: Queryable, workspaceId: string, kind: string, category: string, active?: { id?: string | undefined }): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select i.id from integrations i
      where i.workspace_id = $1 and i.kind = $2 and i.category = $3
        and (not $4 or (i.status = 'active' and i.activated)) and ($5::uuid is null or i.id = $5::uuid)`,
    [workspaceId, kind, category, active !== undefined, active?.id ?? null],
  );
  return rows.map((r) => r.id);
}

/** The statuses of the workspace's activated, connected integrations of these categories (directories by default). */
export async function connectedStatuses(db: Queryable, workspaceId: string, categories: readonly string[] = DIRECTORY_CATEGORIES): Promise<string[]> {
  const { rows } = await db.query<{ status: string }>(
    `select i.status from integrations i where i.workspace_id = $1 and i.activated and i.status <> 'disconnected' and i.category = any($2::text[])`,
    [workspaceId, categories],
  );
  return rows.map((r) => r.status);
}

export type RunWithIntegration = SyncRunRow & { integration_name: string; category: string };

/** One sync run of the workspace, with its integration's name and category. */
export async function getRunOfWorkspace(db: Queryable, workspaceId: string, runId: string): Promise<RunWithIntegration | undefined> {
  const { rows } = await db.query<RunWithIntegration>(
    `select r.*, i.name as integration_name, i.category from sync_runs r join integrations i on i.id = r.integration_id
      where r.workspace_id = $1 and r.id = $2`,
    [workspaceId, runId],
  );
  return rows[0];
}

/** An integration's latest sync runs, newest first. */
export async function recentRuns(db: Queryable, workspaceId: string, integration: { id: string; name: string; category: string }, limit: number): Promise<RunWithIntegration[]> {
  const { rows } = await db.query<RunWithIntegration>(
    `select r.*, $3::text as integration_name, $4::text as category from sync_runs r
      where r.workspace_id = $1 and r.integration_id = $2 order by r.started_at desc limit $5`,
    [workspaceId, integration.id, integration.name, integration.category, limit],
  );
  return rows;
}
