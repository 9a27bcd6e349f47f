/**
 * Webhook deliveries: the only module that writes `webhook_deliveries`, their attempts
 * (`webhook_delivery_attempts`) and the dispatch queue (`webhook_dispatch_queue`).
 *
 * Dispatch. The `events_webhook_dispatch` trigger (migrations/000003_webhook_dispatch.sql) queues an
 * event only when its workspace has an enabled endpoint subscribed to its type, and enqueues one
 * coalescing `dispatch_webhooks` job per workspace. `dispatchBatch` takes a batch of the queue and, in
 * one transaction:
 * - deletes it from the queue (rows locked by a concurrent dispatcher are skipped, not waited for);
 * - inserts one `webhook_deliveries` row per enabled endpoint subscribed to the event's type and
 *   created no later than the event (`unique (event_id, endpoint_id)` with `on conflict do nothing`,
 *   so running it twice or concurrently never duplicates a delivery);
 * - enqueues one `deliver_webhook` job per new delivery in a single `add_jobs` call, with job key
 *   `deliver_webhook:<delivery id>`.
 *
 * Attempts. Each attempt (src/webhooks/delivery.ts sends it) is recorded with `recordAttempt`: the
 * delivery's status and the attempt row, in one transaction with the endpoint's failure count.
 *
 * Redelivery (`sigsync webhook redeliver`). A redelivery puts a settled delivery (succeeded or
 * failed) back to `pending` and enqueues its `deliver_webhook` job, in one transaction. The delivery
 * keeps its id, so the receiver gets the same `webhook-id` header and can deduplicate; the attempt is
 * recorded as the next attempt number. A redelivered attempt that fails is not retried on the
 * schedule again: the delivery is `failed` once more and can be redelivered again.
 */
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import { requestDeliveries, requestDeliveryRetry } from '../jobs/triggers.ts';
import { eventHeads } from '../db/outbox.ts';

export interface DispatchResult {
  /** Queued events taken in this batch. */
  events: number;
  /** Deliveries created (and delivery jobs enqueued). */
  deliveries: string[];
}

/** Dispatches up to `limit` queued events of one workspace. */
export async function dispatchBatch(pool: pg.Pool, workspaceId: string, limit = 500): Promise<DispatchResult> {
  return withTx(pool, async (client) => {
    const batch = await client.query<{ event_id: string }>(
      `delete from webhook_dispatch_queue q
        where q.event_id in (select event_id from webhook_dispatch_queue
                              where workspace_id = $1
                              order by created_at, event_id
                              limit $2
                              for update skip locked)
       returning q.event_id`,
      [workspaceId, limit],
    );
    // The batch's events as the outbox keeps them (one read for the batch), then one insert for all their deliveries.
    const events = await eventHeads(
      client,
      batch.rows.map((b) => b.event_id),
    );
    const created = events.length
      ? await client.query<{ id: string }>(
          `insert into webhook_deliveries (workspace_id, event_id, endpoint_id)
           select e.workspace_id, e.id, ep.id
             from unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[]) as e(id, workspace_id, type, created_at)
             join webhook_endpoints ep
               on ep.workspace_id = e.workspace_id
              and ep.enabled
              and (ep.event_types is null or e.type = any (ep.event_types))
              and ep.created_at <= e.created_at
           on conflict (event_id, endpoint_id) do nothing
           returning id`,
          [events.map((e) => e.id), events.map((e) => e.workspace_id), events.map((e) => e.type), events.map((e) => e.created_at)],
        )
      : { rows: [] };
    const result = { events: batch.rows.length, deliveries: created.rows.map((r) => r.id) };
    await requestDeliveries(client, result.deliveries);
    return result;
  });
}

/** Dispatches everything queued for a workspace, batch by batch. */
export async function dispatchWorkspace(pool: pg.Pool, workspaceId: string, batchSize = 500): Promise<{ events: number; deliveries: number }> {
  let events = 0;
  let deliveries = 0;
  for (;;) {
    const r = await dispatchBatch(pool, workspaceId, batchSize);
    events += r.events;
    deliveries += r.deliveries.length;
    if (r.events < batchSize) return { events, deliveries };
  }
}

/** Fails a pending delivery whose endpoint was disabled meanwhile. */
export async function failForDisabledEndpoint(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(
    `update webhook_deliveries set status = 'failed', next_attempt_at = null, last_error = 'endpoint disabled' where id = $1 and status = 'pending'`,
    [deliveryId],
  );
}

export interface AttemptRecord {
  /** The delivery's attempts before this one; the record applies only if no other run moved them. */
  previousAttempts: number;
  outcome: 'succeeded' | 'retrying' | 'failed';
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** Delay before the next attempt when retrying. */
  retryInMs: number | null;
}

/**
 * Records an attempt: the delivery's status, the attempt row and, when retrying, the next attempt's
 * job at its time. False when another run recorded this attempt first (it cannot happen with one
 * job per delivery key).
 */
export async function recordAttempt(db: Queryable, deliveryId: string, a: AttemptRecord): Promise<boolean> {
  const attempt = a.previousAttempts + 1;
  const upd = await db.query<{ next_attempt_at: Date | null; updated_at: Date }>(
    `update webhook_deliveries
        set attempts = $2, status = $3, last_status_code = $4, last_duration_ms = $5, last_error = $6,
            delivered_at = case when $3 = 'succeeded' then now() end,
            next_attempt_at = case when $7::bigint is null then null else now() + make_interval(secs => $7::bigint / 1000.0) end
      where id = $1 and status = 'pending' and attempts = $8
      returning next_attempt_at, updated_at`,
    [deliveryId, attempt, a.outcome === 'retrying' ? 'pending' : a.outcome, a.statusCode, a.durationMs, a.error, a.retryInMs, a.previousAttempts],
  );
  if (!upd.rowCount) return false;
  const { next_attempt_at: nextAt, updated_at: at } = upd.rows[0]!;
  // The attempt's time is the delivery's update time: listDeliveryAttempts relies on it.
  await db.query(
    `insert into webhook_delivery_attempts (delivery_id, attempt, outcome, status_code, duration_ms, error, next_attempt_at, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [deliveryId, attempt, a.outcome, a.statusCode, a.durationMs, a.error, nextAt, at],
  );
  if (a.outcome === 'retrying') await requestDeliveryRetry(db, deliveryId, nextAt);
  return true;
}

/** One attempt of a delivery, or a delivery not attempted yet (attempt null). */
export interface DeliveryAttemptRow {
  delivery_id: string;
  event_type: string;
  /** The delivery's current status: pending, succeeded or failed. */
  status: string;
  attempt: number | null;
  /** The attempt's outcome: succeeded, retrying or failed. */
  outcome: string | null;
  status_code: number | null;
  duration_ms: number | null;
  error: string | null;
  at: Date;
}

const ATTEMPT_ROWS = `select d.id as delivery_id, d.event_id, d.status, a.attempt, a.outcome, a.status_code, a.duration_ms,
         coalesce(a.error, case when a.id is null then d.last_error end) as error, coalesce(a.created_at, d.created_at) as at,
         (extract(epoch from coalesce(a.created_at, d.created_at)) * 1000000)::bigint::text as at_us
    from webhook_deliveries d
    left join webhook_delivery_attempts a on a.delivery_id = d.id`;

/** The rows kept, each with its event's type (read from the outbox once for them all); a row whose event is gone is left out. */
async function withEventTypes(
  db: Queryable,
  rows: (Omit<DeliveryAttemptRow, 'event_type'> & { event_id: string; at_us: string; us?: bigint })[],
): Promise<DeliveryAttemptRow[]> {
  const types = new Map((await eventHeads(db, [...new Set(rows.map((r) => r.event_id))])).map((e) => [e.id, e.type]));
  return rows.flatMap(({ at_us: _at, us: _us, event_id: eventId, delivery_id: deliveryId, ...r }) => {
    const type = types.get(eventId);
    return type ? [{ delivery_id: deliveryId, event_type: type, ...r }] : [];
  });
}
const NEWEST_FIRST = 'order by coalesce(a.created_at, d.created_at) desc, a.attempt desc nulls first, d.id';
const QUICK_ROUNDS = 3;

/**
 * The attempts of an endpoint's deliveries, newest first; `failed`: only deliveries that ended failed.
 *
 * Read without going through every delivery the endpoint ever had: a row's time (an attempt's, or
 * the creation of a delivery not attempted yet) is never after its delivery's updated_at (an attempt
 * is written with the delivery's update, at the same time, recordAttempt). So deliveries are read
 * newest-updated first (index webhook_deliveries_endpoint_updated), in batches, until the next ones
 * were updated before the oldest row kept. Deliveries updated without an attempt (failed when their
 * endpoint was disabled, requeued) hold older rows; when a few batches do not settle it, every
 * delivery of the endpoint is read at once.
 */
export async function listDeliveryAttempts(db: Queryable, endpointId: string, opts: { failed?: boolean; limit?: number } = {}): Promise<DeliveryAttemptRow[]> {
  const limit = opts.limit ?? 100;
  const failed = opts.failed ?? false;
  type Row = Omit<DeliveryAttemptRow, 'event_type'> & { event_id: string; at_us: string };
  const strip = (rows: (Row & { us?: bigint })[]) => withEventTypes(db, rows);
  // Times are compared in microseconds, as Postgres keeps them (a Date keeps milliseconds).
  const kept: (Row & { us: bigint })[] = [];
  let after: string | null = null;
  for (let round = 0, size = limit; round < QUICK_ROUNDS; round++, size *= 2) {
    const { rows: batch }: { rows: { id: string; updated_us: string }[] } = await db.query<{ id: string; updated_us: string }>(
      `select id, (extract(epoch from updated_at) * 1000000)::bigint::text as updated_us from webhook_deliveries
        where endpoint_id = $1 and (not $2 or status = 'failed')
          and ($3::uuid is null or (updated_at, id) < (select updated_at, id from webhook_deliveries where id = $3))
        order by updated_at desc, id desc limit $4`,
      [endpointId, failed, after, size],
    );
    const { rows } = batch.length ? await db.query<Row>(`${ATTEMPT_ROWS} where d.id = any($1::uuid[])`, [batch.map((b) => b.id)]) : { rows: [] };
    kept.push(...rows.map((r) => ({ ...r, us: BigInt(r.at_us) })));
    kept.sort((x, y) => (x.us === y.us ? (y.attempt ?? Infinity) - (x.attempt ?? Infinity) || (x.delivery_id < y.delivery_id ? -1 : 1) : x.us < y.us ? 1 : -1));
    kept.splice(limit);
    if (batch.length < size) return strip(kept);
    const last: { id: string; updated_us: string } = batch.at(-1)!;
    if (kept.length === limit && kept.at(-1)!.us >= BigInt(last.updated_us)) return strip(kept);
    after = last.id;
  }
  const { rows } = await db.query<Row>(`${ATTEMPT_ROWS} where d.endpoint_id = $1 and (not $2 or d.status = 'failed') ${NEWEST_FIRST} limit $3`, [
    endpointId,
    failed,
    limit,
  ]);
  return strip(rows);
}

export class RedeliveryError extends Error {
  override readonly name = 'RedeliveryError';
}

/** Puts settled deliveries back to pending and enqueues their jobs; answers the ids requeued. */
async function requeue(client: pg.PoolClient, ids: string[]): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `update webhook_deliveries
        set status = 'pending', delivered_at = null, next_attempt_at = null
      where id = any ($1::uuid[]) and status <> 'pending'
      returning id`,
    [ids],
  );
  const requeued = rows.map((r) => r.id);
  await requestDeliveries(client, requeued);
  return requeued;
}

/** Sends one delivery again, keeping its webhook-id. Refuses a pending one and a disabled endpoint. */
export async function redeliver(pool: pg.Pool, deliveryId: string): Promise<{ id: string; endpointId: string; eventType: string }> {
  return withTx(pool, async (client) => {
    const { rows } = await client.query<{ status: string; endpoint_id: string; enabled: boolean; event_id: string }>(
      `select d.status, d.endpoint_id, ep.enabled, d.event_id
         from webhook_deliveries d join webhook_endpoints ep on ep.id = d.endpoint_id
        where d.id = $1 for update of d`,
      [deliveryId],
    );
    const event = rows[0] && (await eventHeads(client, [rows[0].event_id]))[0];
    const d = rows[0] && event ? { ...rows[0], type: event.type } : undefined;
    if (!d) throw new RedeliveryError(`no webhook delivery ${deliveryId}`);
    if (d.status === 'pending') throw new RedeliveryError(`delivery ${deliveryId} is still pending; its next attempt is already scheduled`);
    if (!d.enabled) throw new RedeliveryError(`endpoint ${d.endpoint_id} is disabled; run sigsync webhook enable ${d.endpoint_id} first`);
    await requeue(client, [deliveryId]);
    return { id: deliveryId, endpointId: d.endpoint_id, eventType: d.type };
  });
}

/**
 * Sends again every delivery that failed at or after `since`, of one endpoint or (without `endpointId`)
 * of every enabled endpoint. Deliveries of disabled endpoints are left alone.
 */
export async function redeliverFailed(pool: pg.Pool, since: Date, endpointId?: string): Promise<string[]> {
  return withTx(pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `select d.id from webhook_deliveries d join webhook_endpoints ep on ep.id = d.endpoint_id
        where d.status = 'failed' and d.updated_at >= $1 and ep.enabled and ($2::uuid is null or d.endpoint_id = $2)
        order by d.updated_at
        for update of d`,
      [since, endpointId ?? null],
    );
    return requeue(
      client,
      rows.map((r) => r.id),
    );
  });
}

/** Is this delivery one of the workspace's endpoints'? */
export async function deliveryOfWorkspace(db: Queryable, deliveryId: string, workspaceId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from webhook_deliveries d join webhook_endpoints ep on ep.id = d.endpoint_id where d.id = $1 and ep.workspace_id = $2',
    [deliveryId, workspaceId],
  );
  return Boolean(rowCount);
}
