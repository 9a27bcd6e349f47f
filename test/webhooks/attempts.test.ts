/**
 * An endpoint's newest delivery attempts (listDeliveryAttempts) read from the deliveries updated
 * last, checked against every row of the endpoint sorted newest first: plain deliveries, a delivery
 * created long ago whose retry is the newest attempt, deliveries not attempted yet, and a burst of
 * deliveries failed without an attempt (their endpoint disabled) updated after everything else.
 */
import { describe, expect, it } from 'vitest';
import { listDeliveryAttempts, type DeliveryAttemptRow } from '../../src/webhooks/deliveries.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { useTestContext } from '../helpers/db.ts';
import { insertWebhookEndpoint } from '../helpers/fixtures/webhooks.ts';

describe('listDeliveryAttempts', () => {
  const t = useTestContext();

  it('answers the newest attempts of the endpoint, as reading every delivery would', async () => {
    const { pool } = t.ctx;
    const ws = (await createWorkspace(pool, 'Acme')).id;
    const endpoint = (url: string) => insertWebhookEndpoint(pool, ws, { url });
    const ep = await endpoint('https://hooks.example.test/a');
    const other = await endpoint('https://hooks.example.test/b');
    const minutesAgo = (m: number) => new Date(Date.UTC(2026, 0, 10) - m * 60_000);

    // A delivery: created at `created`, attempted at each time of `attempts` (none: pending), last updated at `updated`.
    const delivery = async (endpointId: string, d: { created: Date; attempts: Date[]; updated: Date; status: 'pending' | 'succeeded' | 'failed' }) => {
      const event = (
        await pool.query<{ id: string }>(
          `insert into events (workspace_id, type, payload, occurred_at) values ($1, 'teammate.created', '{}', $2) returning id`,
          [ws, d.created],
        )
      ).rows[0]!.id;
      const id = (
        await pool.query<{ id: string }>(
          `insert into webhook_deliveries (workspace_id, event_id, endpoint_id, status, attempts, delivered_at, last_error, created_at, updated_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
          [
            ws,
            event,
            endpointId,
            d.status,
            d.attempts.length,
            d.status === 'succeeded' ? d.attempts.at(-1) : null,
            d.status === 'failed' ? 'endpoint disabled' : null,
            d.created,
            d.updated,
          ],
        )
      ).rows[0]!.id;
      for (const [i, at] of d.attempts.entries()) {
        const last = i === d.attempts.length - 1;
        const outcome = last && d.status === 'succeeded' ? 'succeeded' : last && d.status === 'failed' ? 'failed' : 'retrying';
        await pool.query(
          `insert into webhook_delivery_attempts (delivery_id, attempt, outcome, status_code, duration_ms, error, next_attempt_at, created_at) values ($1, $2, $3, $4, 40, $5, $6, $7)`,
          [id, i + 1, outcome, outcome === 'succeeded' ? 200 : 500, outcome === 'succeeded' ? null : 'HTTP 500', outcome === 'retrying' ? at : null, at],
        );
      }
      return id;
    };

    // 60 delivered at once, a minute apart, the newest 100 minutes ago; a few failed after a retry.
    for (let i = 0; i < 60; i++) {
      const at = minutesAgo(100 + i);
      const failed = i % 7 === 0;
      const attempts = failed ? [at, minutesAgo(99 + i)] : [at];
      await delivery(ep, { created: at, attempts, updated: attempts.at(-1)!, status: failed ? 'failed' : 'succeeded' });
    }
    // Created long ago, retried: its second attempt is the newest of all.
    const retried = await delivery(ep, {
      created: minutesAgo(5000),
      attempts: [minutesAgo(4999), minutesAgo(10)],
      updated: minutesAgo(10),
      status: 'succeeded',
    });
    // Two not attempted yet.
    await delivery(ep, { created: minutesAgo(20), attempts: [], updated: minutesAgo(20), status: 'pending' });
    await delivery(ep, { created: minutesAgo(130), attempts: [], updated: minutesAgo(130), status: 'pending' });
    // The other endpoint's deliveries never show.
    for (let i = 0; i < 5; i++) await delivery(other, { created: minutesAgo(i), attempts: [minutesAgo(i)], updated: minutesAgo(i), status: 'succeeded' });

    // Reading every delivery of the endpoint, newest first.
    const everything = async (endpointId: string, failed: boolean, limit: number) =>
      (
        await pool.query<DeliveryAttemptRow>(
          `select d.id as delivery_id, e.type as event_type, d.status, a.attempt, a.outcome, a.status_code, a.duration_ms,
                  coalesce(a.error, case when a.id is null then d.last_error end) as error, coalesce(a.created_at, d.created_at) as at
             from webhook_deliveries d join events e on e.id = d.event_id left join webhook_delivery_attempts a on a.delivery_id = d.id
            where d.endpoint_id = $1 and (not $2 or d.status = 'failed')
            order by coalesce(a.created_at, d.created_at) desc, a.attempt desc nulls first, d.id limit $3`,
          [endpointId, failed, limit],
        )
      ).rows;
    const check = async (opts: { failed?: boolean; limit: number }) => {
      const got = await listDeliveryAttempts(pool, ep, opts);
      expect(got, JSON.stringify(opts)).toEqual(await everything(ep, opts.failed ?? false, opts.limit));
      return got;
    };

    const newest = await check({ limit: 20 });
    expect(newest[0]).toMatchObject({ delivery_id: retried, attempt: 2 });
    expect(newest[1]).toMatchObject({ attempt: null, status: 'pending' });
    await check({ limit: 5 });
    await check({ limit: 100 });
    await check({ failed: true, limit: 5 });

    // The endpoint was disabled: 150 pending deliveries failed at once, without an attempt, after
    // everything above (more than the batches read before reading every delivery).
    for (let i = 0; i < 150; i++) await delivery(ep, { created: minutesAgo(3000 + i), attempts: [], updated: minutesAgo(1), status: 'failed' });
    await check({ limit: 20 });
    await check({ failed: true, limit: 20 });
    await check({ limit: 200 });
  });
});
