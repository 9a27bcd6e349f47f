/**
 * Fan-out: turn a trigger into one install job per (address, kind, integration), enqueued in bulk.
 * The job key is the address, kind and integration, so a burst of triggers coalesces into one
 * install of the latest state. Installs that cannot happen get their status here without a job.
 *
 * Lock order. graphile-worker's `add_jobs` locks one jobs row per key: it clears the key of running
 * jobs (in the order of its join), then inserts or updates the pending ones (in the order of the
 * specs). Two fan-outs of one signature (a publish while the previous fan-out still runs gets a new
 * fan-out job) used to enqueue the same keys at once, in whatever order their recipients query
 * returned them and their joins visited them: each held rows the other waited for, and Postgres
 * ended one with 40P01 (deadlock detected), up to the job's last attempt. Now every enqueue of a
 * workspace's install jobs runs in a transaction that first takes that workspace's advisory lock,
 * and its keys are sorted: two enqueues never hold job rows at the same time, and the rows of one
 * are always taken in one order. Other writers of these rows (a worker taking or completing a job,
 * an install re-queueing its own key) touch one row at a time and cannot close a cycle with it.
 */
import type pg from 'pg';
import { withTx } from '../db/tx.ts';
import { enqueueMany, jobKey, jobs } from '../jobs/catalogue.ts';
import type { InstallJob } from './install.ts';
import type { InstallTarget } from './routing.ts';

const BATCH = 1000;

export async function enqueueInstalls(pool: pg.Pool, workspaceId: string, targets: InstallTarget[], forced: boolean, runAt?: Date): Promise<number> {
  const payloads = targets.map((t) => ({ workspaceId, emailId: t.emailId, kind: t.kind, integrationId: t.integrationId, forced }) satisfies InstallJob);
  const items = [...new Map(payloads.map((p) => [jobKey(jobs.installMailbox, p)!, p])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, payload]) => (runAt ? { payload, runAt } : { payload }));
  for (let i = 0; i < items.length; i += BATCH) {
    await withTx(pool, async (c) => {
      await c.query(`select pg_advisory_xact_lock(hashtextextended('sigsync:install-jobs:' || $1, 0))`, [workspaceId]);
      // graphile-worker's bulk insert, inside this transaction.
      await enqueueMany(c, jobs.installMailbox, items.slice(i, i + BATCH));
    });
  }
  return targets.length;
}
