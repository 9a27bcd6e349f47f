/** `sigsync webhook deliveries` and `sigsync webhook redeliver`: see and replay what was sent. */
import type { Command } from 'commander';
import { out, table } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { requireUuid, withContext } from './admin.ts';

const deliveries = () => import('../../webhooks/deliveries.ts');

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--failed-since`: an ISO 8601 time (`2026-03-01T09:00Z`) or a span back from now (`30m`, `2h`, `1d`). */
export function parseSince(raw: string, now = Date.now()): Date {
  const span = /^(\d+)([mhd])$/.exec(raw.trim());
  if (span) return new Date(now - Number(span[1]) * UNITS[span[2]!]!);
  const at = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--failed-since: expected an ISO 8601 time such as 2026-03-01T09:00Z, or a span such as 30m, 2h or 1d; got "${raw}"`);
  return new Date(at);
}

function positiveInt(raw: string, flag: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000) throw new UsageError(`${flag}: an integer from 1 to 10000; got "${raw}"`);
  return Number(raw);
}

async function redeliverOne(id: string): Promise<void> {
  const { redeliver, RedeliveryError } = await deliveries();
  await withContext(async (ctx) => {
    try {
      const r = await redeliver(ctx.pool, id);
      out(`redelivery queued: ${r.id} (${r.eventType}) to endpoint ${r.endpointId}, same webhook-id`);
    } catch (e) {
      if (e instanceof RedeliveryError) throw new UsageError(`delivery: ${e.message}`);
      throw e;
    }
  });
}

export function deliveryCommands(webhook: Command): void {
  webhook
    .command('deliveries')
    .description("List an endpoint's delivery attempts, newest first: event, status, response code, duration.")
    .argument('<id>', 'endpoint id')
    .option('--failed', 'only deliveries that ended failed')
    .option('--limit <n>', 'at most this many rows', '100')
    .action(async (rawId: string, opts: { failed?: boolean; limit: string }) => {
      const id = requireUuid(rawId, 'id');
      const limit = positiveInt(opts.limit, '--limit');
      const [{ listDeliveryAttempts }, { endpointExists }] = await Promise.all([deliveries(), import('../../webhooks/endpoints.ts')]);
      await withContext(async (ctx) => {
        if (!(await endpointExists(ctx.pool, id))) throw new UsageError(`id: no webhook endpoint ${id} (sigsync webhook list shows them)`);
        const rows = await listDeliveryAttempts(ctx.pool, id, { failed: opts.failed === true, limit });
        table(
          rows.map((r) => ({
            delivery: r.delivery_id,
            event: r.event_type,
            status: r.status,
            attempt: r.attempt,
            outcome: r.outcome,
            code: r.status_code,
            duration: r.duration_ms === null ? null : `${r.duration_ms} ms`,
            at: r.at,
            error: r.error,
          })),
          ['delivery', 'event', 'status', 'attempt', 'outcome', 'code', 'duration', 'at', 'error'],
        );
      });
    });

  webhook
    .command('redeliver')
    .description('Send a delivery again with the same webhook-id (receivers deduplicate), or every failed delivery since a time.')
    .argument('[delivery]', 'delivery id (from sigsync webhook deliveries)')
    .option('--failed-since <time>', 'every delivery that failed since this time: ISO 8601, or a span back from now such as 30m, 2h, 1d')
    .option('--endpoint <id>', 'with --failed-since: only this endpoint')
    .action(async (rawId: string | undefined, opts: { failedSince?: string; endpoint?: string }) => {
      if (rawId !== undefined && opts.failedSince !== undefined) throw new UsageError('redeliver: give a delivery id or --failed-since, not both');
      if (rawId !== undefined) return redeliverOne(requireUuid(rawId, 'delivery'));
      if (opts.failedSince === undefined) throw new UsageError('redeliver: give a delivery id, or --failed-since TIME for every failed delivery since then');
      const since = parseSince(opts.failedSince);
      const endpointId = opts.endpoint === undefined ? undefined : requireUuid(opts.endpoint, '--endpoint');
      const { redeliverFailed } = await deliveries();
      await withContext(async (ctx) => {
        const ids = await redeliverFailed(ctx.pool, since, endpointId);
        out(`${ids.length} failed deliver${ids.length === 1 ? 'y' : 'ies'} since ${since.toISOString()} queued again, each with its webhook-id`);
        for (const id of ids) out(`  ${id}`);
      });
    });
}
