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
import type { InstallJob } from './install.ts';
import type { InstallTarget } from './recipients.ts';

export const INSTALL_TASK = 'install_mailbox';
const BATCH = 1000;

export const installJobKey = (t: Pick<InstallTarget, 'emailId' | 'kind' | 'integrationId'>) => `install:${t.emailId}:${t.kind}:${t.integrationId}`;

export async function enqueueInstalls(pool: pg.Pool, workspaceId: string, targets: InstallTarget[], forced: boolean, runAt?: Date): Promise<number> {
  const specs = [...new Map(targets.map((t) => [installJobKey(t), t])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([jobKey, t]) => ({
      identifier: INSTALL_TASK,
      payload: { workspaceId, emailId: t.emailId, kind: t.kind, integrationId: t.integrationId, forced } satisfies InstallJob,
      run_at: runAt?.toISOString() ?? null,
      max_attempts: 10,
      job_key: jobKey,
    }));
  for (let i = 0; i < specs.length; i += BATCH) {
    await withTx(pool, async (c) => {
      await c.query(`select pg_advisory_xact_lock(hashtextextended('sigsync:install-jobs:' || $1, 0))`, [workspaceId]);
      // graphile-worker's bulk insert (what helpers.addJobs runs), inside this transaction.
      await c.query(`select 1 from graphile_worker.add_jobs(array(select json_populate_recordset(null::graphile_worker.job_spec, $1::json)), false)`, [
        JSON.stringify(specs.slice(i, i + BATCH)),
      ]);
    });
  }
  return targets.length;
}
