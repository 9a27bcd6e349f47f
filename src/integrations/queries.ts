/**
 * Reads of integrations and their sync runs for the API and the console (src/integrations/repository.ts
 * and syncRuns.ts write them), and for the Outlook add-in and the compatibility report.
 */
import type { Queryable } from '../db/tx.ts';
import type { PageWindow } from '../db/pages.ts';
import { DIRECTORY_CATEGORIES } from '../domain.ts';
import { kindsWhere } from '../../connectors/registry.ts';
import { isAddinMode, type IntegrationRow } from './repository.ts';
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

/** The workspace's active, activated integrations in add-in mode: what an add-in fetch moves to `installed`. */
export async function addinIntegrations(db: Queryable, workspaceId: string): Promise<IntegrationRow[]> {
  const { rows } = await db.query<IntegrationRow>({
    name: 'addin_integrations',
    text: `select * from integrations where workspace_id = $1 and kind = any($2::text[]) and category = 'signatures' and status = 'active' and activated`,
    values: [workspaceId, kindsWhere('signatures', (c) => c.addinMode === true)],
  });
  return rows.filter(isAddinMode);
}

/** Every Microsoft integration that is not disconnected, in every workspace, oldest first, with its (encrypted) credentials: the add-in's tenants. */
export async function microsoftIntegrations(db: Queryable): Promise<{ id: string; workspace_id: string; credentials: Buffer; config: Record<string, unknown> }[]> {
  const { rows } = await db.query<{ id: string; workspace_id: string; credentials: Buffer; config: Record<string, unknown> }>(
    `select id, workspace_id, credentials, config from integrations where kind = 'microsoft_entra' and status <> 'disconnected' order by created_at`,
  );
  return rows;
}

/** The kinds of the workspace's signatures integrations that are not disconnected, sorted. */
export async function signatureIntegrationKinds(db: Queryable, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ kind: string }>(
    `select distinct kind from integrations where workspace_id = $1 and category = 'signatures' and status <> 'disconnected' order by kind`,
    [workspaceId],
  );
  return rows.map((r) => r.kind);
}
