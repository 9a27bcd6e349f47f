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

/**
 * Whether every directory integration of the workspace finished its last run: none is running and
 * none's latest run failed or stopped. A seat decrease waits for that, so a partial listing never
 * lowers the bill.
 */
export async function directoriesSettled(db: Queryable, workspaceId: string): Promise<boolean> {
  const { rows } = await db.query<{ unsettled: number }>(
    `select count(*)::int as unsettled from integrations i
       cross join lateral (select r.status from sync_runs r where r.integration_id = i.id order by r.started_at desc limit 1) last
      where i.workspace_id = $1 and i.category = 'teammates' and i.status = 'active' and last.status <> 'succeeded'`,
    [workspaceId],
  );
  return (rows[0]?.unsettled ?? 0) === 0;
}
