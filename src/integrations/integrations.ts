/**
 * Add-in mode (integration config `mode: "addin"`, for connectors that declare `addinMode`, such as
 * Outlook): nothing is pushed; the Outlook add-in fetches the signature at compose time.
 */
export function isAddinMode(integration: Pick<IntegrationRow, 'kind' | 'config'>): boolean {
  return integration.config.mode === 'addin' && capabilitiesOf(integration.kind, 'signatures').addinMode === true;
}

/**
 * Integrations: loading one (always scoped to its workspace), building its connector from the
 * registry with decrypted credentials, and the status transitions with their events:
 *
 *   connect      -> active, integration.connected the first time only
 *   access lost  -> access_lost, integration.access_lost once per loss (conditional UPDATE)
 *   reconnect    -> active again; re-arms access_lost; no integration.connected
 *   disconnect   -> disconnected, integration.disconnected
 */
import { integrationDashboardUrl } from '../dashboard.ts';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { capabilitiesOf, directorySources, mailboxInstallers, photoSources, type ConnectorKind } from '../../connectors/registry.ts';
import type { ConnectorDefinition } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/tx.ts';
import type { IntegrationCategory, IntegrationStatus } from '../domain.ts';
import { requestIntegrationInstalls } from '../jobs/triggers.ts';
import { cancelRunningRuns } from './syncRuns.ts';
import { emitEvent, type IntegrationRef } from '../db/outbox.ts';
import type { UrlPolicy } from '../net/ssrf.ts';
import { checkIntegrationUrls, IntegrationUrlError, integrationUrlPolicy } from './urls.ts';

export type { IntegrationCategory, IntegrationStatus };

export interface IntegrationRow {
  id: string;
  workspace_id: string;
  kind: ConnectorKind;
  category: IntegrationCategory;
  name: string;
  status: IntegrationStatus;
  activated: boolean;
  credentials: Buffer;
  config: Record<string, unknown>;
  sync_cursor: { token: string; obtainedAt: string } | null;
  last_full_sync_at: Date | null;
  error_message: string | null;
  error_since: Date | null;
  dashboard_url: string | null;
  connected_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function getIntegration(db: Queryable, workspaceId: string, id: string): Promise<IntegrationRow | undefined> {
  const { rows } = await db.query<IntegrationRow>({
    name: 'integration_get',
    text: 'select * from integrations where workspace_id = $1 and id = $2',
    values: [workspaceId, id],
  });
  return rows[0];
}

export function integrationRef(i: Pick<IntegrationRow, 'id' | 'kind' | 'category' | 'name'>): IntegrationRef {
  return { uuid: i.id, kind: i.kind, category: i.category, name: i.name };
}

/** Where an admin fixes a lost connection; carried by integration.access_lost as reconnect_url. */
export function reconnectUrl(ctx: AppContext, i: Pick<IntegrationRow, 'id' | 'dashboard_url'>): string {
  return integrationDashboardUrl(ctx.config.PUBLIC_BASE_URL, i);
}

function registryFor(category: IntegrationCategory) {
  switch (category) {
    case 'teammates':
    case 'smart_fields':
      return directorySources;
    case 'signatures':
      return mailboxInstallers;
    case 'assets':
      return photoSources;
  }
}

export class IntegrationSetupError extends Error {
  override readonly name = 'IntegrationSetupError';
}

/** The connector definition for a kind and category, or a clear error when there is none. */
export function connectorDefinition(kind: ConnectorKind, category: IntegrationCategory): ConnectorDefinition<z.ZodType, z.ZodType, unknown> {
  const def = (registryFor(category) as Partial<Record<ConnectorKind, ConnectorDefinition<z.ZodType, z.ZodType, unknown>>>)[kind];
  if (!def) throw new IntegrationSetupError(`no ${category} connector for ${kind}`);
  return def;
}

function describeIssues(what: string, error: z.ZodError): string {
  const i = error.issues[0]!;
  return `${what}: ${i.path.join('.') || '(root)'}: ${i.message}`;
}

/**
 * Validates credentials and config against the connector's schemas, and the config's URLs against
 * the SSRF guard (src/integrations/urls.ts); throws IntegrationSetupError.
 */
export function validateSetup(kind: ConnectorKind, category: IntegrationCategory, credentials: unknown, config: unknown, urlPolicy: UrlPolicy) {
  const def = connectorDefinition(kind, category);
  const creds = def.credentialsSchema.safeParse(credentials);
  if (!creds.success) throw new IntegrationSetupError(describeIssues('credentials', creds.error));
  const conf = def.configSchema.safeParse(config ?? {});
  if (!conf.success) throw new IntegrationSetupError(describeIssues('config', conf.error));
  try {
    checkIntegrationUrls(conf.data, urlPolicy);
  } catch (e) {
    if (e instanceof IntegrationUrlError) throw new IntegrationSetupError(e.message, { cause: e });
    throw e;
  }
  return { def, credentials: creds.data as unknown, config: conf.data as Record<string, unknown> };
}

/**
 * Builds the connector of an integration. With `signal`, every provider request the connector
 * makes is cancelled once it is aborted (ConnectorContext.signal): a sync run passes its job's.
 */
export function buildConnector<T>(ctx: AppContext, integration: IntegrationRow, logger: Logger, opts: { signal?: AbortSignal | undefined } = {}): T {
  const credentials = ctx.secrets.decryptJson(integration.credentials);
  const urlPolicy = integrationUrlPolicy(ctx.config);
  const { def, credentials: creds, config } = validateSetup(integration.kind, integration.category, credentials, integration.config, urlPolicy);
  const logged = logger.child({ integrationId: integration.id, kind: integration.kind });
  return def.create({ config, credentials: creds, logger: logged, urlPolicy, ...(opts.signal ? { signal: opts.signal } : {}) }) as T;
}

/**
 * Moves an integration to access_lost. One conditional UPDATE: only the first loss after a connect
 * or reconnect changes the row, and only that one writes integration.access_lost.
 */
export async function markAccessLost(ctx: AppContext, db: Queryable, integration: IntegrationRow, message: string): Promise<boolean> {
  const { rows } = await db.query<IntegrationRow>(
    `update integrations set status = 'access_lost', error_message = $3, error_since = now()
      where workspace_id = $1 and id = $2 and status = 'active' returning *`,
    [integration.workspace_id, integration.id, message],
  );
  const row = rows[0];
  if (!row) return false;
  await emitEvent(db, row.workspace_id, 'integration.access_lost', {
    integration: integrationRef(row),
    error_message: message,
    reconnect_url: reconnectUrl(ctx, row),
  });
  ctx.logger.warn({ integrationId: row.id, kind: row.kind, error: message }, 'integration lost access');
  return true;
}

export interface ConnectInput {
  workspaceId: string;
  kind: ConnectorKind;
  category: IntegrationCategory;
  name: string;
  credentials: unknown;
  config: Record<string, unknown>;
}

/**
 * The lock on whether a workspace has an integration that installs signatures (category
 * `signatures`, not disconnected, activated: the integrations src/install/routing.ts routes to).
 * A sync page that creates or changes teammates queues their installs only when the workspace has
 * one (src/sync/pages.ts): it takes this lock shared (holdInstallers) before it writes anything,
 * looks (hasInstallers, src/integrations/queries.ts) once its people are written, and keeps the
 * lock to its commit, while a change that can
 * add such an integration (connecting one, reconnecting a disconnected one) takes it exclusively
 * first (lockInstallers), before it writes anything either (so neither side holds a row the other
 * waits for). So the page either sees the new integration and queues the installs, or
 * commits before it exists, and every fan-out that can find the integration finds the page's people.
 */
const INSTALLERS_LOCK_KEY = `hashtextextended('sigsync:installers:' || $1::text, 0)`;

/** Taken by a change that can give the workspace an integration that installs signatures (see INSTALLERS_LOCK_KEY). */
export async function lockInstallers(client: pg.PoolClient, workspaceId: string): Promise<void> {
  await client.query(`select pg_advisory_xact_lock(${INSTALLERS_LOCK_KEY})`, [workspaceId]);
}

/** Taken, to its commit, by a transaction that looks whether the workspace has an integration that installs signatures. */
export async function holdInstallers(client: pg.PoolClient, workspaceId: string): Promise<void> {
  await client.query(`select pg_advisory_xact_lock_shared(${INSTALLERS_LOCK_KEY})`, [workspaceId]);
}

/**
 * Stores a new integration, active, and writes integration.connected (its first activation). A new
 * mailbox integration that can serve an add-in (Outlook) uses it unless its config names a mode.
 */
export async function insertIntegration(ctx: AppContext, client: pg.PoolClient, input: ConnectInput): Promise<IntegrationRow> {
  if (input.category === 'signatures') await lockInstallers(client, input.workspaceId);
  if (input.category === 'signatures' && input.config.mode === undefined && capabilitiesOf(input.kind, 'signatures').addinMode === true) {
    input = { ...input, config: { ...input.config, mode: 'addin' } };
  }
  const { rows } = await client.query<IntegrationRow>(
    `insert into integrations (workspace_id, kind, category, name, credentials, config, status, connected_at)
     values ($1, $2, $3, $4, $5, $6, 'active', now()) returning *`,
    [input.workspaceId, input.kind, input.category, input.name, ctx.secrets.encryptJson(input.credentials), input.config],
  );
  const row = rows[0]!;
  await emitEvent(client, row.workspace_id, 'integration.connected', { integration: integrationRef(row) });
  return row;
}

/**
 * Rewrites config and credentials of a workspace's live integrations of one kind and category, and
 * drops their incremental sync state (the sandbox repoints them at freshly started emulators).
 */
export async function repointIntegrations(
  ctx: AppContext,
  db: Queryable,
  workspaceId: string,
  conn: Pick<ConnectInput, 'kind' | 'category' | 'credentials' | 'config'>,
): Promise<void> {
  await db.query(
    `update integrations set config = $4, credentials = $5, sync_cursor = null, sync_cursor_at = null, updated_at = now()
      where workspace_id = $1 and kind = $2 and category = $3 and status <> 'disconnected'`,
    [workspaceId, conn.kind, conn.category, conn.config, ctx.secrets.encryptJson(conn.credentials)],
  );
}

/**
 * Replaces credentials and returns the integration to active, re-arming access_lost. When it had
 * lost access, the installs held back meanwhile are released (in the same transaction).
 */
export async function updateCredentials(
  ctx: AppContext,
  client: pg.PoolClient,
  integration: IntegrationRow,
  credentials: unknown,
): Promise<{ row: IntegrationRow; wasLost: boolean }> {
  // A disconnected mailbox integration comes back as one that installs signatures.
  if (integration.category === 'signatures') await lockInstallers(client, integration.workspace_id);
  const prev = await client.query<{ status: IntegrationStatus }>('select status from integrations where workspace_id = $1 and id = $2 for update', [
    integration.workspace_id,
    integration.id,
  ]);
  const { rows } = await client.query<IntegrationRow>(
    `update integrations set credentials = $3, status = 'active', error_message = null, error_since = null,
            disconnected_at = null, connected_at = coalesce(connected_at, now())
      where workspace_id = $1 and id = $2 returning *`,
    [integration.workspace_id, integration.id, ctx.secrets.encryptJson(credentials)],
  );
  const row = rows[0]!;
  const wasLost = prev.rows[0]?.status === 'access_lost';
  if (wasLost) await requestIntegrationInstalls(client, row.workspace_id, row.id);
  return { row, wasLost };
}

export async function markDisconnected(client: pg.PoolClient, integration: IntegrationRow): Promise<boolean> {
  const { rows } = await client.query<IntegrationRow>(
    `update integrations set status = 'disconnected', disconnected_at = now(), error_message = null, error_since = null
      where workspace_id = $1 and id = $2 and status <> 'disconnected' returning *`,
    [integration.workspace_id, integration.id],
  );
  const row = rows[0];
  if (!row) return false;
  await cancelRunningRuns(client, row.id, 'integration disconnected');
  await emitEvent(client, row.workspace_id, 'integration.disconnected', { integration: integrationRef(row) });
  return true;
}

/**
 * After a complete listing: the incremental state the next run starts from (when the source gave
 * one), and when the last full listing was.
 */
export async function saveSyncCursor(db: Queryable, integrationId: string, nextState: unknown, fullListing: boolean): Promise<void> {
  await db.query(
    `update integrations set sync_cursor = coalesce($2::jsonb, sync_cursor), sync_cursor_at = case when $2::jsonb is null then sync_cursor_at else now() end,
            last_full_sync_at = case when $3 then now() else last_full_sync_at end
      where id = $1`,
    [integrationId, nextState === undefined ? null : JSON.stringify(nextState), fullListing],
  );
}
