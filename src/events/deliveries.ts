/**
 * Reading and replaying webhook deliveries (`sigsync webhook deliveries`, `sigsync webhook redeliver`).
 *
 * A redelivery puts a settled delivery (succeeded or failed) back to `pending` and enqueues its
 * `deliver_webhook` job, in one transaction. The delivery keeps its id, so the receiver gets the same
 * `webhook-id` header and can deduplicate; the attempt is recorded as the next attempt number. A
 * redelivered attempt that fails is not retried on the schedule again: the delivery is `failed`
 * once more and can be redelivered again.
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import { withTx } from '../db/tx.ts';
import { DELIVER_JOB_MAX_ATTEMPTS, DELIVER_TASK } from './dispatch.ts';

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

/** The attempts of an endpoint's deliveries, newest first; `failed`: only deliveries that ended failed. */
export async function listDeliveryAttempts(db: Queryable, endpointId: string, opts: { failed?: boolean; limit?: number } = {}): Promise<DeliveryAttemptRow[]> {
  const { rows } = await db.query<DeliveryAttemptRow>(
    `select d.id as delivery_id, e.type as event_type, d.status, a.attempt, a.outcome, a.status_code, a.duration_ms,
            coalesce(a.error, case when a.id is null then d.last_error end) as error, coalesce(a.created_at, d.created_at) as at
       from webhook_deliveries d
       join events e on e.id = d.event_id
       left join webhook_delivery_attempts a on a.delivery_id = d.id
      where d.endpoint_id = $1 and (not $2 or d.status = 'failed')
      order by coalesce(a.created_at, d.created_at) desc, a.attempt desc nulls first
      limit $3`,
    [endpointId, opts.failed ?? false, opts.limit ?? 100],
  );
  return rows;
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
  if (requeued.length) {
    await client.query(
      `select count(*) from graphile_worker.add_jobs(array(
         select row($2::text, json_build_object('deliveryId', id), null, null, $3::smallint, $2 || ':' || id, null, null)::graphile_worker.job_spec
           from unnest($1::uuid[]) as id))`,
      [requeued, DELIVER_TASK, DELIVER_JOB_MAX_ATTEMPTS],
    );
  }
  return requeued;
}

/** Sends one delivery again, keeping its webhook-id. Refuses a pending one and a disabled endpoint. */
export async function redeliver(pool: pg.Pool, deliveryId: string): Promise<{ id: string; endpointId: string; eventType: string }> {
  return withTx(pool, async (client) => {
    const { rows } = await client.query<{ status: string; endpoint_id: string; enabled: boolean; type: string }>(
      `select d.status, d.endpoint_id, ep.enabled, e.type
         from webhook_deliveries d join webhook_endpoints ep on ep.id = d.endpoint_id join events e on e.id = d.event_id
        where d.id = $1 for update of d`,
      [deliveryId],
    );
    const d = rows[0];
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
    return requeue(client, rows.map((r) => r.id));
  });
}
