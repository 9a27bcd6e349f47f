/**
 * `sync-many`: a host that syncs many customers nightly on one database. N workspaces with one
 * Google directory of U users each (the same emulated tenant, each workspace its own copy), synced
 * by the nightly job (`directory_sync_all`, what DIRECTORY_SYNC_CRON queues) with two
 * `sigsync worker` processes of WORKER_CONCURRENCY jobs each.
 *
 *   npm run bench -- sync-many [--workspaces 1000] [--users 100] [--latency 50] [--workers 2] [--concurrency 10]
 *
 * Figures: total wall time from the nightly job to the last run finished, against the floor: the
 * sum of every run's own floor (its pages × latency) divided by the jobs that run at once (workers ×
 * concurrency); `ratio` = wall / floor. `slowest_wait_s` is the longest a run waited for a worker
 * (from the nightly job creating it to an execution taking it up), beside `one_sync_s`, the median
 * time one run takes once taken up, and `slowest_sync_s`. `cpu` holds the CPU seconds of the worker
 * processes, Postgres and the emulator over the whole night.
 */
import os from 'node:os';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { enqueue, jobs } from '../src/jobs/catalogue.ts';
import { insertIntegration } from '../src/integrations/integrations.ts';
import { googleServiceAccount } from './fixtures.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb, startEmulatorProcess, startWorkerProcesses, until, type WorkerProcesses } from './support.ts';
import { median, round } from './stats.ts';
import { postmasterPid, treeCpuSeconds } from './cpu.ts';

interface RunTimes {
  wait_s: number;
  own_s: number;
  pages: number;
}

export async function syncManyScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const workspaces = Number(options.workspaces ?? (quick ? 100 : 1000));
  const users = Number(options.users ?? 100);
  const latencyMs = Number(options.latency ?? 50);
  const workerCount = Number(options.workers ?? 2);
  const concurrency = Number(options.concurrency ?? 10);
  const db = await openBenchDb();
  const emulator = await startEmulatorProcess({ users, latencyMs });
  let workers: WorkerProcesses | undefined;
  try {
    const config = { base_url: `${emulator.url}/`, token_url: `${emulator.url}/token` };
    for (let i = 0; i < workspaces; i++) {
      const ws = await createWorkspace(db.ctx.pool, `customer ${i}`);
      await withTx(db.ctx.pool, (c) =>
        insertIntegration(db.ctx, c, {
          workspaceId: ws.id,
          kind: 'google_workspace',
          category: 'teammates',
          name: 'Google',
          credentials: googleServiceAccount(),
          config,
        }),
      );
    }
    log(`${workspaces} workspaces of ${users} users; ${workerCount} workers × ${concurrency} jobs`);
    // Measured from when every worker is up, not from its start.
    workers = await startWorkerProcesses(db, workerCount, concurrency);
    const pgPid = await postmasterPid(db.ctx.pool);
    const cpu0 = {
      pg: pgPid === null ? null : treeCpuSeconds(pgPid),
      em: treeCpuSeconds(emulator.pid),
      workers: workers.pids.map((pid) => treeCpuSeconds(pid) ?? 0),
    };

    const t0 = performance.now();
    await enqueue(db.ctx.pool, jobs.syncAll, {});
    await until(
      async () => (await db.ctx.pool.query<{ n: number }>(`select count(*)::int as n from sync_runs where status <> 'running'`)).rows[0]!.n === workspaces,
      30 * 60_000,
      'every workspace synced',
    );
    const wall = (performance.now() - t0) / 1000;
    const workerCpu = workers.pids.map((pid, i) => (treeCpuSeconds(pid) ?? 0) - cpu0.workers[i]!).reduce((a, b) => a + b, 0);
    const pgCpu = pgPid === null || cpu0.pg === null ? null : (treeCpuSeconds(pgPid) ?? 0) - cpu0.pg;
    const emCpu = (treeCpuSeconds(emulator.pid) ?? 0) - (cpu0.em ?? 0);

    const { rows } = await db.ctx.pool.query<RunTimes & { status: string }>(
      `select status, pages, extract(epoch from claimed_at - started_at)::float8 as wait_s, extract(epoch from finished_at - claimed_at)::float8 as own_s from sync_runs`,
    );
    const failed = rows.filter((r) => r.status !== 'succeeded').length;
    const floor = rows.reduce((a, r) => a + (r.pages * latencyMs) / 1000, 0) / (workerCount * concurrency);
    const slowestWait = Math.max(...rows.map((r) => r.wait_s));
    const oneSync = median(rows.map((r) => r.own_s));
    const teammates = (await db.ctx.pool.query<{ n: number }>('select count(*)::int as n from teammates')).rows[0]!.n;
    log(
      `${workspaces} workspaces synced in ${wall.toFixed(1)} s (floor ${floor.toFixed(1)} s); slowest wait ${slowestWait.toFixed(1)} s; one sync ${oneSync.toFixed(2)} s`,
    );
    return {
      workspaces,
      users_per_workspace: users,
      latency_ms: latencyMs,
      workers: workerCount,
      concurrency_per_worker: concurrency,
      wall_s: round(wall, 3),
      floor_s: round(floor, 3),
      ratio: round(wall / floor, 3),
      goal_ratio: 6,
      stretch_ratio: 1.2,
      slowest_wait_s: round(slowestWait, 3),
      one_sync_s: round(oneSync, 3),
      slowest_sync_s: round(Math.max(...rows.map((r) => r.own_s)), 3),
      teammates,
      cpu: {
        wall_s: round(wall, 3),
        worker_cpu_s: round(workerCpu, 3),
        postgres_cpu_s: pgCpu === null ? null : round(pgCpu, 3),
        emulator_cpu_s: round(emCpu, 3),
        load_avg_1m: round(os.loadavg()[0]!, 2),
        cores: os.availableParallelism(),
      },
      failures: [
        ...(failed ? [`${failed} runs did not succeed`] : []),
        ...(teammates !== workspaces * users ? [`${teammates} teammates for ${workspaces * users} users`] : []),
      ],
    };
  } finally {
    await workers?.stop();
    await emulator.stop();
    await db.close();
  }
}
