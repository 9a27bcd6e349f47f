/** `sigsync webhook add|list|remove|enable`: the endpoints a workspace's events are delivered to. */
import type { Command } from 'commander';
import { out, table } from '../output.ts';
import { UsageError } from '../errors.ts';
import { requireUuid, withContext } from './admin.ts';
import { EVENT_TYPES, type EventType } from '../../events/outbox.ts';

const endpoints = () => import('../../events/endpoints.ts');

async function eventTypesOption(raw: string | undefined): Promise<EventType[] | null> {
  const { parseEventTypes, UnknownEventTypeError } = await endpoints();
  try {
    return parseEventTypes(raw);
  } catch (e) {
    if (e instanceof UnknownEventTypeError) throw new UsageError(`--events: ${e.message}`);
    throw e;
  }
}

async function refuseUnsafe<T>(fn: () => Promise<T>): Promise<T> {
  const { UnsafeUrlError } = await import('../../events/ssrf.ts');
  try {
    return await fn();
  } catch (e) {
    if (e instanceof UnsafeUrlError) throw new UsageError(`--url: refused: ${e.message}`);
    throw e;
  }
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
      const [{ createEndpoint }, { validateWebhookUrl }, { loadConfig }] = await Promise.all([endpoints(), import('../../events/ssrf.ts'), import('../../config.ts')]);
      // Checked before the database is opened, and again by createEndpoint.
      await refuseUnsafe(() => validateWebhookUrl(opts.url, { allowInsecure: loadConfig().ALLOW_INSECURE_WEBHOOKS }));
      await withContext(async (ctx) => {
        const { rowCount } = await ctx.pool.query('select 1 from workspaces where id = $1', [workspaceId]);
        if (!rowCount) throw new UsageError(`--workspace: no workspace ${workspaceId}`);
        const created = await refuseUnsafe(() => createEndpoint(ctx, { workspaceId, url: opts.url, eventTypes }));
        out(`webhook endpoint ${created.endpoint.id}`);
        out(`url            ${created.endpoint.url}`);
        out(`events         ${created.endpoint.event_types?.join(',') ?? 'all'}`);
        out(`signing secret ${created.secret}`);
        out('The secret is shown only this once; store it now. Verify deliveries with any Standard Webhooks library.');
      });
    });

  webhook
    .command('list')
    .description("List a workspace's endpoints (secrets are never shown).")
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (opts: { workspace: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const { listEndpoints } = await endpoints();
      await withContext(async (ctx) => {
        const rows = await listEndpoints(ctx.pool, workspaceId);
        table(
          rows.map((r) => ({
            id: r.id,
            url: r.url,
            events: r.event_types?.join(',') ?? 'all',
            enabled: r.enabled ? 'yes' : 'no',
            failures: r.consecutive_failures,
            disabled_reason: r.disabled_reason,
            created_at: r.created_at,
          })),
          ['id', 'url', 'events', 'enabled', 'failures', 'disabled_reason', 'created_at'],
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
      await withContext(async (ctx) => {
        if (!(await removeEndpoint(ctx.pool, id))) throw new UsageError(`id: no webhook endpoint ${id}`);
        out(`removed webhook endpoint ${id}`);
      });
    });

  webhook
    .command('enable')
    .description('Re-enable a disabled endpoint and reset its failure count.')
    .argument('<id>', 'endpoint id')
    .action(async (rawId: string) => {
      const id = requireUuid(rawId, 'id');
      const { enableEndpoint } = await endpoints();
      await withContext(async (ctx) => {
        if (!(await enableEndpoint(ctx.pool, id))) throw new UsageError(`id: no webhook endpoint ${id}`);
        out(`enabled webhook endpoint ${id}`);
      });
    });
}
