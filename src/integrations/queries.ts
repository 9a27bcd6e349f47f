/**
 * Reads of integrations and their sync runs for the API and the console (src/integrations/integrations.ts
 * and syncRuns.ts write them), and for the Outlook add-in and the compatibility report.
 */
import type { Queryable } from '../db/tx.ts';
import type { PageWindow } from '../db/pages.ts';
import { DIRECTORY_CATEGORIES } from '../domain.ts';
import { kindsWhere } from '../../connectors/registry.ts';
import { isAddinMode, type IntegrationRow } from './integrations.ts';
import type { SyncRunRow } from './syncRuns.ts';

/** The workspace's integrations that are not disconnected, newest first. */
export async function listIntegrations(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: IntegrationRow[]; total: number }> {
  const { rows } = await db.query<IntegrationRow & { total: number }>(
    `select *, count(*) over () as total from integrations
      where workspace_id = $1 and status <> 'disconnected'
      order by created_at desc, id desc limit $2 offset $3`,
    [workspaceId, page.limit, page.offset],
  );
  const total =
    rows[0]?.total ??
    (await db.query<{ n: number }>(`select count(*)::int as n from integrations where workspace_id = $1 and status <> 'disconnected'`, [workspaceId])).rows[0]!
      .n;
  return { rows, total };
}

/** What a link to an integration checks: its category, status and names. */
export async function integrationSummary(
  db: Queryable,
  workspaceId: string,
  id: string,
): Promise<{ id: string; category: string; status: string; dashboard_url: string | null; name: string } | undefined> {
  const { rows } = await db.query<{ id: string; category: string; status: string; dashboard_url: string | null; name: string }>(
    'select id, category, status, dashboard_url, name from integrations where workspace_id = $1 and id = $2',
    [workspaceId, id],
  );
  return rows[0];
}

/** Of the integrations `ids`, the first connected directory (teammates) integration: an active one first, then the oldest. */
export async function firstConnectedDirectory(
  db: Queryable,
  workspaceId: string,
  ids: readonly string[],
): Promise<{ id: string; name: string; status: string; dashboard_url: string | null } | undefined> {
  const { rows } = await db.query<{ id: string; name: string; status: string; dashboard_url: string | null }>(
    `select i.id, i.name, i.status, i.dashboard_url from integrations i
      where i.workspace_id = $1 and i.id = any($2::uuid[]) and i.category = 'teammates' and i.status <> 'disconnected'
      order by (i.status = 'active') desc, i.created_at limit 1`,
    [workspaceId, ids],
  );
  return rows[0];
}

/** The ids of the workspace's integrations of a provider kind and category; `active`: only those active and activated (and `id` only). */
export async function integrationIdsOfKind(
  db: Queryable,
  workspaceId: string,
  kind: string,
  category: string,
  active?: { id?: string | undefined },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select i.id from integrations i
      where i.workspace_id = $1 and i.kind = $2 and i.category = $3
        and (not $4 or (i.status = 'active' and i.activated)) and ($5::uuid is null or i.id = $5::uuid)`,
    [workspaceId, kind, category, active !== undefined, active?.id ?? null],
  );
  return rows.map((r) => r.id);
}

/**
 * Whether the workspace has an integration that installs signatures: one of category `signatures`,
 * not disconnected, activated (the integrations src/install/routing.ts routes addresses to). Read
 * under holdInstallers (src/integrations/integrations.ts) to act on the answer until the commit.
 */
export async function hasInstallers(db: Queryable, workspaceId: string): Promise<boolean> {
  return (await connectedStatuses(db, workspaceId, ['signatures'])).length > 0;
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
export async function recentRuns(
  db: Queryable,
  workspaceId: string,
  integration: { id: string; name: string; category: string },
  limit: number,
): Promise<RunWithIntegration[]> {
  const { rows } = await db.query<RunWithIntegration>(
    `select r.*, $3::text as integration_name, $4::text as category from sync_runs r
      where r.workspace_id = $1 and r.integration_id = $2 order by r.started_at desc limit $5`,
    [workspaceId, integration.id, integration.name, integration.category, limit],
  );
  return rows;
}

/**
 * One integration by its id alone, whatever its workspace: the operator's CLI names integrations
 * so (`sigsync integration reconnect ID`, `sigsync sync --integration ID`).
 */
export async function integrationById(db: Queryable, id: string): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>('select * from integrations where id = $1', [id]);
  return rows[0];
}

export type IntegrationListRow = {
  id: string;
  workspace: string;
  kind: string;
  category: string;
  name: string;
  status: string;
  error: string | null;
  error_since: Date | null;
};

/** Every integration (disconnected ones too), or one workspace's, oldest first: `sigsync integration list`. */
export async function integrationsForOperator(db: Queryable, workspaceId: string | null): Promise<IntegrationListRow[]> {
  const { rows } = await db.query<IntegrationListRow>(
    `select id, workspace_id as workspace, kind, category, name, status, error_message as error, error_since
       from integrations where ($1::uuid is null or workspace_id = $1) order by created_at`,
    [workspaceId],
  );
  return rows;
}

/**
 * The credentials of one integration of the database, any workspace's, or undefined when none is
 * stored: the encryption key check at start (src/db/deployment.ts) tells from it which key wrote them.
 */
export async function anyStoredCredential(db: Queryable): Promise<Buffer | undefined> {
  const { rows } = await db.query<{ credentials: Buffer }>('select credentials from integrations limit 1');
  return rows[0]?.credentials;
}

/** The kind and name of these integrations of the workspace, ordered by name (the database's collation). */
export async function integrationNames(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<{ id: string; kind: string; name: string }[]> {
  const { rows } = await db.query<{ id: string; kind: string; name: string }>(
    'select id, kind, name from integrations where workspace_id = $1 and id = any($2::uuid[]) order by name',
    [workspaceId, ids],
  );
  return rows;
}

/** The teammates each integration's latest succeeded run saw (what a progress bar expects); integrations without one are left out. */
export async function lastSucceededSeen(db: Queryable, integrationIds: readonly string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ integration_id: string; seen: number }>(
    `select distinct on (integration_id) integration_id, seen from sync_runs
      where integration_id = any($1::uuid[]) and status = 'succeeded' order by integration_id, finished_at desc`,
    [integrationIds],
  );
  return new Map(rows.map((r) => [r.integration_id, r.seen]));
}

export type RunListRow = Pick<
  SyncRunRow,
  'id' | 'status' | 'mode' | 'trigger' | 'pages' | 'seen' | 'created' | 'updated' | 'deleted' | 'errors' | 'started_at' | 'finished_at' | 'stage_ms'
> & { integration: string; error: string };

/** The latest runs of every workspace, or of one workspace or one integration, newest first: `sigsync runs`. */
export async function latestRuns(db: Queryable, filter: { workspaceId: string | null; integrationId: string | null }, limit: number): Promise<RunListRow[]> {
  const { rows } = await db.query<RunListRow>(
    `select r.id, i.name as integration, r.status, r.mode, r.trigger, r.pages, r.seen, r.created, r.updated, r.deleted,
            r.errors, r.started_at, r.finished_at, coalesce(r.error_code, '') as error, r.stage_ms
       from sync_runs r join integrations i on i.id = r.integration_id
      where ($1::uuid is null or r.workspace_id = $1) and ($2::uuid is null or r.integration_id = $2)
      order by r.started_at desc limit $3`,
    [filter.workspaceId, filter.integrationId, limit],
  );
  return rows;
}

/** The id of the workspace's latest sync run, or undefined when it has none. */
export async function latestRunId(db: Queryable, workspaceId: string): Promise<string | undefined> {
  const { rows } = await db.query<{ id: string }>('select id from sync_runs where workspace_id = $1 order by started_at desc limit 1', [workspaceId]);
  return rows[0]?.id;
}

export interface RunSummary {
  id: string;
  integration: string;
  status: string;
  mode: string;
  seen: number;
  created: number;
  updated: number;
  deleted: number;
  error_code: string | null;
  error: string | null;
}

/** These runs' states with their integrations' names, ordered by that name (the sandbox's demo waits on them). */
export async function runSummaries(db: Queryable, runIds: readonly string[]): Promise<RunSummary[]> {
  const { rows } = await db.query<RunSummary>(
    `select r.id, i.name as integration, r.status, r.mode, r.seen, r.created, r.updated, r.deleted, r.error_code, r.error
       from sync_runs r join integrations i on i.id = r.integration_id where r.id = any($1::uuid[]) order by i.name`,
    [runIds],
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
export async function microsoftIntegrations(
  db: Queryable,
): Promise<{ id: string; workspace_id: string; credentials: Buffer; config: Record<string, unknown> }[]> {
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
