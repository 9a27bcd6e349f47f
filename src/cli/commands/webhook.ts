/**
 * `sigsync webhook add|list|remove|enable|deliveries|redeliver`: the endpoints a workspace's events
 * are delivered to, and their deliveries.
 */
import type { Command } from 'commander';
import { out, table } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { cliActor, requireUuid, requireWorkspace, withContext } from './admin.ts';
import { EVENT_TYPES, type EventType } from '../../db/outbox.ts';
import { deliveryCommands } from './webhookDeliveries.ts';
import type { Queryable } from '../../db/tx.ts';

const endpoints = () => import('../../webhooks/endpoints.ts');

/**
 * Runs `change` (remove, enable) on endpoint `id` in one transaction with its audit entry; false when
 * there is no such endpoint (nothing recorded).
 */
async function auditedEndpointChange(id: string, action: string, change: (db: Queryable) => Promise<boolean>): Promise<boolean> {
  const [{ endpointWorkspace }, { withTx }, { recordAudit }] = await Promise.all([endpoints(), import('../../db/tx.ts'), import('../../db/audit.ts')]);
  return withContext((ctx) =>
    withTx(ctx.pool, async (c) => {
      const workspaceId = await endpointWorkspace(c, id);
      if (!workspaceId || !(await change(c))) return false;
      await recordAudit(c, workspaceId, cliActor(), { action, targetKind: 'webhook_endpoint', target: id });
      return true;
    }),
  );
}

async function eventTypesOption(raw: string | undefined): Promise<EventType[] | null> {
  const { parseEventTypes, UnknownEventTypeError } = await endpoints();
  try {
    return parseEventTypes(raw);
  } catch (e) {
    if (e instanceof UnknownEventTypeError) throw new UsageError(`--events: ${e.message}`);
    throw e;
  }
}

/** What to change when a loopback or http receiver is refused because ALLOW_INSECURE_OUTBOUND_URLS is off. */
const INSECURE_HINT = 'set ALLOW_INSECURE_OUTBOUND_URLS=1 to allow an http or loopback receiver (tests; sandbox mode allows it by default)';

async function refuseUnsafe<T>(fn: () => Promise<T>, allowInsecure: boolean): Promise<T> {
  const { UnsafeUrlError } = await import('../../net/ssrf.ts');
  try {
    return await fn();
  } catch (e) {
    if (e instanceof UnsafeUrlError) {
      const hint = !allowInsecure && /https|loopback/.test(e.message) && !e.message.includes('ALLOW_INSECURE_OUTBOUND_URLS') ? `; ${INSECURE_HINT}` : '';
      throw new UsageError(`--url: refused: ${e.message}${hint}`);
    }
    throw e;
  }
}

/** The configuration of a webhook command: in sandbox mode, loopback receivers are allowed. */
async function webhookConfig() {
  const [{ loadConfig }, { sandboxConfig }] = await Promise.all([import('../../config.ts'), import('../../sandbox/mode.ts')]);
  return sandboxConfig(loadConfig());
}

export function webhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('Manage webhook endpoints (signed event delivery).');

  webhook
    .command('add')
    .description('Register an endpoint; prints its id and signing secret (shown only once).')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--url <url>', 'https URL that receives the events')
    .option('--events <types>', `"all" or a comma-separated list of: ${EVENT_TYPES.join(', ')}`, 'all')
    .action(async (opts: { workspace: string; url: string; events: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const eventTypes = await eventTypesOption(opts.events);
      const [{ createEndpoint }, { validateWebhookUrl }, config] = await Promise.all([endpoints(), import('../../net/ssrf.ts'), webhookConfig()]);
      const allowInsecure = config.ALLOW_INSECURE_OUTBOUND_URLS;
      // Checked before the database is opened, and again by createEndpoint.
      await refuseUnsafe(() => validateWebhookUrl(opts.url, { allowInsecure }), allowInsecure);
      await withContext(async (ctx) => {
        await requireWorkspace(ctx, workspaceId);
        const created = await refuseUnsafe(() => createEndpoint({ ...ctx, config }, { workspaceId, url: opts.url, eventTypes }), allowInsecure);
        const { recordAudit } = await import('../../db/audit.ts');
        await recordAudit(ctx.pool, workspaceId, cliActor(), {
          action: 'webhook_endpoint.create',
          targetKind: 'webhook_endpoint',
          target: created.endpoint.id,
          details: { url: created.endpoint.url, events: created.endpoint.event_types ?? 'all' },
        });
        out(`webhook endpoint ${created.endpoint.id}`);
        out(`url            ${created.endpoint.url}`);
        out(`events         ${created.endpoint.event_types?.join(',') ?? 'all'}`);
        out(`signing secret ${created.secret}`);
        out('The secret is shown only this once; store it now. Verify deliveries with any Standard Webhooks library.');
      });
    });

  webhook
    .command('list')
    .description('List the endpoints of every workspace, or of one (secrets are never shown).')
    .option('--workspace <id>', 'only this workspace')
    .action(async (opts: { workspace?: string }) => {
      const workspaceId = opts.workspace === undefined ? undefined : requireUuid(opts.workspace, '--workspace');
      const { listEndpoints } = await endpoints();
      await withContext(async (ctx) => {
        const rows = await listEndpoints(ctx.pool, workspaceId);
        table(
          rows.map((r) => ({
            id: r.id,
            workspace: r.workspace_id,
            url: r.url,
            events: r.event_types?.join(',') ?? 'all',
            enabled: r.enabled ? 'yes' : 'no',
            failures: r.consecutive_failures,
            disabled_reason: r.disabled_reason,
            created_at: r.created_at,
          })),
          ['id', ...(workspaceId ? [] : ['workspace']), 'url', 'events', 'enabled', 'failures', 'disabled_reason', 'created_at'],
        );
      });
    });

  webhook
    .command('remove')
    .description('Delete an endpoint and its pending deliveries.')
    .argument('<id>', 'endpoint id')
    .action(async (rawId: string) => {
      const id = requireUuid(rawId, 'id');
      const { removeEndpoint } = await endpoints();
      if (!(await auditedEndpointChange(id, 'webhook_endpoint.delete', (c) => removeEndpoint(c, id)))) throw new UsageError(`id: no webhook endpoint ${id}`);
      out(`removed webhook endpoint ${id}`);
    });

  webhook
    .command('enable')
    .description('Re-enable a disabled endpoint and reset its failure count.')
    .argument('<id>', 'endpoint id')
    .action(async (rawId: string) => {
      const id = requireUuid(rawId, 'id');
      const { enableEndpoint } = await endpoints();
      if (!(await auditedEndpointChange(id, 'webhook_endpoint.enable', (c) => enableEndpoint(c, id)))) throw new UsageError(`id: no webhook endpoint ${id}`);
      out(`enabled webhook endpoint ${id}`);
    });

  deliveryCommands(webhook);
}
