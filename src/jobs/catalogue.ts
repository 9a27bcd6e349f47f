/**
 * The job catalogue: every graphile-worker job the service runs, with its name, its payload schema,
 * its job key rule and its attempts. `enqueue` and `enqueueMany` are the only ways to add a job, in
 * the caller's transaction when given its client; each task of src/tasks/ is defined from its entry
 * here (src/tasks/define.ts). No other file names a job (test/architecture/jobs.test.ts).
 *
 * Glossary (graphile-worker's words):
 * - job key: jobs with one key coalesce; adding one replaces the job still waiting with that key
 *   (its payload and run_at), and a running one gets a successor. Without a key, every enqueue is a
 *   job of its own.
 * - max attempts: how often graphile-worker runs a job that throws, with exponential backoff;
 *   graphile-worker's default is 25.
 * - queue: jobs of one named queue run one at a time, in order.
 * A payload is `unknown` until the task's schema parses it: old jobs may carry an old shape.
 */
import { z } from 'zod';
import type { Queryable } from '../db/tx.ts';

export interface JobType<N extends string = string, S extends z.ZodType = z.ZodType, K = z.input<S>> {
  /** The task identifier in graphile-worker's tables. */
  readonly name: N;
  readonly payload: S;
  /** The job key of a job (see the glossary); it reads the payload unless the entry asks for more (`keyBy`). */
  readonly key?: (input: K) => string;
  /** Default: graphile-worker's 25. */
  readonly maxAttempts?: number;
  readonly queue?: string;
}

function job<const N extends string, S extends z.ZodType, K = z.input<S>>(def: JobType<N, S, K>): JobType<N, S, K> {
  return def;
}

const uuid = z.uuid();
const signatureKind = z.enum(['primary', 'reply', 'internal']);

export const jobs = {
  /** Daily housekeeping (crontab): per-run bookkeeping and raw analytics past retention. */
  prune: job({ name: 'prune', payload: z.object({ olderThanHours: z.number().int().min(0).default(24) }).loose() }),
  /** The nightly directory sync (crontab, DIRECTORY_SYNC_CRON): one run per active directory integration. */
  syncAll: job({ name: 'directory_sync_all', payload: z.object({}).loose() }),
  /** One directory sync run; one at a time per integration. */
  syncIntegration: job({
    name: 'sync_integration',
    payload: z.object({ runId: uuid }),
    key: (k: { integrationId: string }) => `sync:${k.integrationId}`,
    maxAttempts: 10,
  }),
  /** The install of one (address, kind, integration); a burst of triggers coalesces into one install of the latest state. */
  installMailbox: job({
    name: 'install_mailbox',
    payload: z.object({ workspaceId: uuid, emailId: uuid, kind: signatureKind, integrationId: uuid, forced: z.boolean().default(false) }),
    key: (p) => `install:${p.emailId}:${p.kind}:${p.integrationId}`,
    maxAttempts: 10,
  }),
  /** Publish, variant publish, forced re-install, campaign change: install jobs for a signature's recipients. */
  fanoutSignature: job({
    name: 'fanout_signature',
    payload: z.object({ workspaceId: uuid, signatureId: uuid, kinds: z.array(signatureKind).min(1), forced: z.boolean() }),
    key: (p) => `fanout:${p.signatureId}:${p.kinds.join(',')}:${p.forced ? 'forced' : 'changed'}`,
    maxAttempts: 10,
  }),
  /** A directory sync or a hand edit changed these teammates: reinstall their mailboxes. */
  fanoutTeammates: job({ name: 'fanout_teammates', payload: z.object({ workspaceId: uuid, teammateIds: z.array(uuid) }), maxAttempts: 10 }),
  /** An integration got its access back: the installs held back as access_lost are queued again. */
  fanoutIntegration: job({
    name: 'fanout_integration',
    payload: z.object({ workspaceId: uuid, integrationId: uuid }),
    key: (p) => `fanout-integration:${p.integrationId}`,
    maxAttempts: 10,
  }),
  /**
   * Fans a workspace's queued events out to webhook deliveries. Enqueued by the database: the
   * `events_webhook_dispatch` trigger (migrations/000003_webhook_dispatch.sql) adds it with job key
   * `<name>:<workspace id>`, keeping a waiting job's run_at.
   */
  dispatchWebhooks: job({ name: 'dispatch_webhooks', payload: z.object({ workspaceId: uuid }).loose() }),
  /**
   * One attempt of one webhook delivery. Delivery retries are scheduled by the task itself (a new
   * run_at under the same key); the attempts cover only unexpected errors such as a lost connection.
   */
  deliverWebhook: job({
    name: 'deliver_webhook',
    payload: z.object({ deliveryId: uuid }).loose(),
    key: (p) => `deliver_webhook:${p.deliveryId}`,
    maxAttempts: 10,
  }),
  /** The campaign scheduler (crontab, every 30 minutes). */
  campaignTick: job({ name: 'campaign_tick', payload: z.object({ now: z.iso.datetime({ offset: true }).optional() }).loose() }),
  /** Copies directory photos into assets for one `assets` integration. */
  syncPhotos: job({
    name: 'sync_photos',
    payload: z.object({ workspaceId: uuid, integrationId: uuid }),
    key: (p) => `photos:${p.integrationId}`,
    maxAttempts: 10,
  }),
  /** Mirrors the subscription and invoices of one workspace from the payment provider. */
  syncBilling: job({ name: 'sync_billing', payload: z.object({ workspaceId: uuid }) }),
  /** Moves the subscription's quantity after a directory run; a burst coalesces per workspace. */
  syncSeats: job({
    name: 'sync_seats',
    payload: z.object({ workspaceId: uuid, runId: uuid }),
    key: (p) => `seats:${p.workspaceId}`,
    maxAttempts: 8,
  }),
  /** Keeps the analytics rollups current (crontab, every minute), one at a time. */
  analyticsRollup: job({
    name: 'analytics_rollup',
    payload: z.object({ since: z.iso.date().optional(), workspace_id: uuid.optional() }).loose(),
    queue: 'analytics_rollup',
  }),
} as const;

type Catalogue = typeof jobs;
export type JobName = Catalogue[keyof Catalogue]['name'];

// Types graphile-worker's own addJob and task lists from the catalogue (graphile-worker's documented way).
declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace GraphileWorker {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Tasks extends CatalogueTasks {}
  }
}
type CatalogueTasks = { [J in Catalogue[keyof Catalogue] as J['name']]: z.input<J['payload']> };

/** When a job runs (default: now), and what its key reads beyond the payload, where its entry asks for more. */
export type JobOptions<P, K> = { runAt?: Date } & ([P] extends [K] ? { keyBy?: K } : { keyBy: K });
type OptionsArg<P, K> = [P] extends [K] ? [opts?: JobOptions<P, K>] : [opts: JobOptions<P, K>];

/** The job key of a job of this type, or null when its jobs have none. */
export function jobKey<S extends z.ZodType, K>(type: JobType<string, S, K>, payload: z.input<S>, opts?: { keyBy?: K }): string | null {
  return type.key ? type.key((opts?.keyBy ?? payload) as K) : null;
}

/** Adds one job (in the caller's transaction when `db` is its client). */
export async function enqueue<S extends z.ZodType, K>(
  db: Queryable,
  type: JobType<string, S, K>,
  payload: z.input<S>,
  ...[opts]: OptionsArg<z.input<S>, K>
): Promise<void> {
  await db.query(`select graphile_worker.add_job($1, $2::json, queue_name := $3, run_at := $4, max_attempts := $5, job_key := $6)`, [
    type.name,
    JSON.stringify(payload),
    type.queue ?? null,
    opts?.runAt ?? null,
    type.maxAttempts ?? null,
    jobKey(type, payload, opts),
  ]);
}

/** Adds jobs of one type in one statement (graphile-worker's `add_jobs`, what `helpers.addJobs` runs), in the given order. */
export async function enqueueMany<S extends z.ZodType, K>(
  db: Queryable,
  type: JobType<string, S, K>,
  items: readonly ({ payload: z.input<S> } & JobOptions<z.input<S>, K>)[],
): Promise<void> {
  if (!items.length) return;
  const specs = items.map((item) => ({
    identifier: type.name,
    payload: item.payload,
    queue_name: type.queue ?? null,
    run_at: item.runAt?.toISOString() ?? null,
    max_attempts: type.maxAttempts ?? null,
    job_key: jobKey(type, item.payload, item),
  }));
  await db.query(`select count(*) from graphile_worker.add_jobs(array(select json_populate_recordset(null::graphile_worker.job_spec, $1::json)), false)`, [
    JSON.stringify(specs),
  ]);
}
