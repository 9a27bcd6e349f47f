/**
 * Builders for tests: a workspace with an API key, integrations pointed at the emulated tenants,
 * smart fields mapped to directory attributes.
 */
import crypto from 'node:crypto';
import type { AppContext } from '../../src/context.ts';
import { withTx } from '../../src/db/tx.ts';
import { insertIntegration, type IntegrationCategory, type IntegrationRow } from '../../src/integrations/integrations.ts';
import { requestSignatureInstall } from '../../src/jobs/triggers.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { assignToEveryGroup, insertSignature } from './fixtures/signatures.ts';
import { insertSmartField } from './fixtures/smartFields.ts';

export { workspaceWithKey } from './fixtures/workspaces.ts';

let cachedKey: string | undefined;
/** A throwaway RSA key for service-account credentials (generated once per process). */
export function testPrivateKey(): string {
  cachedKey ??= crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return cachedKey;
}

export function googleServiceAccount(subject = 'admin@example.test') {
  return {
    type: 'service_account',
    client_email: 'sync@sigsync-test.iam.gserviceaccount.com',
    private_key: testPrivateKey(),
    private_key_id: 'k1',
    subject,
  };
}

export async function connectGoogle(
  ctx: AppContext,
  workspaceId: string,
  emulatorUrl: string,
  opts: { category?: IntegrationCategory; config?: Record<string, unknown>; name?: string } = {},
): Promise<IntegrationRow> {
  return withTx(ctx.pool, (client) =>
    insertIntegration(ctx, client, {
      workspaceId,
      kind: 'google_workspace',
      category: opts.category ?? 'teammates',
      name: opts.name ?? 'Google Workspace',
      credentials: googleServiceAccount(),
      config: { base_url: `${emulatorUrl}/`, token_url: `${emulatorUrl}/token`, ...(opts.config ?? {}) },
    }),
  );
}

export async function mapSmartField(
  ctx: AppContext,
  workspaceId: string,
  slug: string,
  integrationId: string | null,
  attribute: string | null,
): Promise<string> {
  return insertSmartField(ctx.pool, workspaceId, { slug, integrationId, integrationAttribute: attribute });
}

export async function eventCount(ctx: AppContext, workspaceId: string, type: string): Promise<number> {
  const { rows } = await ctx.pool.query<{ n: number }>('select count(*)::int as n from events where workspace_id = $1 and type = $2', [workspaceId, type]);
  return rows[0]!.n;
}

/** The teammates the workspace's queued `fanout_teammates` jobs ask installs for. */
export async function queuedFanoutTeammates(ctx: AppContext, workspaceId: string): Promise<string[]> {
  const { rows } = await ctx.pool.query<{ payload: { workspaceId: string; teammateIds: string[] } }>(
    `select p.payload from graphile_worker.jobs j join graphile_worker._private_jobs p on p.id = j.id where j.task_identifier = 'fanout_teammates'`,
  );
  return rows.filter((r) => r.payload.workspaceId === workspaceId).flatMap((r) => r.payload.teammateIds);
}

/** Syncs `directoryId` once, then creates a signature with the draft `tree` assigned to every synced group; returns its id. */
export async function syncAndAssignToGroups(ctx: AppContext, workspaceId: string, directoryId: string, tree: unknown): Promise<string> {
  const [run] = await startRuns(ctx.pool, workspaceId, [directoryId], { trigger: 'cli' });
  const finished = await executeRun(ctx, run!.id, { retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 } });
  if (finished?.status !== 'succeeded') throw new Error(`the directory sync ended ${finished?.status}`);
  const signatureId = await insertSignature(ctx.pool, workspaceId, { draftContent: tree });
  await assignToEveryGroup(ctx.pool, workspaceId, signatureId);
  return signatureId;
}

/** Publishes the draft of `signatureId` and queues its primary installs, as the publish route does. */
export async function publishAndInstall(ctx: AppContext, workspaceId: string, signatureId: string): Promise<void> {
  await withTx(ctx.pool, async (c) => {
    await c.query(`update signatures set content = draft_content, last_published_at = now() where id = $1`, [signatureId]);
    await requestSignatureInstall(c, workspaceId, signatureId, { kinds: ['primary'], forced: false });
  });
}
