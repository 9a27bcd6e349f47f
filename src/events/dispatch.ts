/**
 * Fan-out of queued events to webhook deliveries.
 *
 * The `events_webhook_dispatch` trigger (migrations/000003_webhook_dispatch.sql) queues an event only
 * when its workspace has an enabled endpoint subscribed to its type, and enqueues one coalescing
 * `dispatch_webhooks` job per workspace. `dispatchBatch` takes a batch of the queue and, in one
 * transaction:
 * - deletes it from the queue (rows locked by a concurrent dispatcher are skipped, not waited for);
 * - inserts one `webhook_deliveries` row per enabled endpoint subscribed to the event's type and
 *   created no later than the event (`unique (event_id, endpoint_id)` with `on conflict do nothing`,
 *   so running it twice or concurrently never duplicates a delivery);
 * - enqueues one `deliver_webhook` job per new delivery in a single `add_jobs` call, with job key
 *   `deliver_webhook:<delivery id>`.
 */
import type pg from 'pg';
import { withTx } from '../db/tx.ts';

export const DISPATCH_TASK = 'dispatch_webhooks';
export const DELIVER_TASK = 'deliver_webhook';
/** Graphile-worker attempts for a delivery job. Delivery retries are scheduled by the task itself
 * (delivery.ts); these cover only unexpected errors such as a lost database connection. */
export const DELIVER_JOB_MAX_ATTEMPTS = 10;

export const deliveryJobKey = (deliveryId: string) => `${DELIVER_TASK}:${deliveryId}`;

export interface DispatchResult {
  /** Queued events taken in this batch. */
  events: number;
  /** Deliveries created (and delivery jobs enqueued). */
  deliveries: string[];
}

/** Dispatches up to `limit` queued events of one workspace. */
export async function dispatchBatch(pool: pg.Pool, workspaceId: string, limit = 500): Promise<DispatchResult> {
  return withTx(pool, async (client) => {
    const { rows } = await client.query<{ events: number; deliveries: string[] }>(
      `with batch as (
         delete from webhook_dispatch_queue q
          where q.event_id in (select event_id from webhook_dispatch_queue
                                where workspace_id = $1
                                order by created_at, event_id
                                limit $2
                                for update skip locked)
         returning q.event_id
       ), created as (
         insert into webhook_deliveries (workspace_id, event_id, endpoint_id)
         select e.workspace_id, e.id, ep.id
           from batch b
           join events e on e.id = b.event_id
           join webhook_endpoints ep
             on ep.workspace_id = e.workspace_id
            and ep.enabled
            and (ep.event_types is null or e.type = any (ep.event_types))
            and ep.created_at <= e.created_at
         on conflict (event_id, endpoint_id) do nothing
         returning id
       )
       select (select count(*) from batch)::int as events,
              coalesce((select array_agg(id) from created), '{}') as deliveries`,
      [workspaceId, limit],
    );
    const result = rows[0]!;
    if (result.deliveries.length) {
      await client.query(
        `select count(*) from graphile_worker.add_jobs(array(
           select row($2::text, json_build_object('deliveryId', id), null, null, $3::smallint, $2 || ':' || id, null, null)::graphile_worker.job_spec
             from unnest($1::uuid[]) as id))`,
        [result.deliveries, DELIVER_TASK, DELIVER_JOB_MAX_ATTEMPTS],
      );
    }
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
