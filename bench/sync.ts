/**
 * Directory sync against the emulated Google tenant in another process, through the real SDK and
 * the engine's write path into a real Postgres.
 *
 *   npm run bench -- sync-google [--users 20000] [--latency 0] [--repeat 3]
 *
 * Figures: users/s, pages, and the process's peak RSS; with --latency, the floor is pages × latency
 * (the time the provider alone takes) and `ratio` = wall / floor.
 */
import { executeRun } from '../src/sync/engine.ts';
import { startRuns } from '../src/sync/runs.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/repository.ts';
import { googleServiceAccount, mapSmartFieldSql } from './fixtures.ts';
import type { BenchArgs, Figures } from './scenarios.ts';
import { median, openBenchDb, peakRssMb, round, startEmulatorProcess } from './support.ts';

export async function syncGoogleScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const users = Number(options.users ?? (quick ? 2000 : 20000));
  const latencyMs = Number(options.latency ?? 0);
  const repeat = Number(options.repeat ?? (quick ? 1 : 3));
  const db = await openBenchDb();
  const emulator = await startEmulatorProcess({ users, latencyMs });
  try {
    const walls: number[] = [];
    let pages = 0;
    // Warm-up run (not counted), then `repeat` measured runs, each into a fresh workspace.
    for (let i = 0; i <= repeat; i++) {
      const ws = await createWorkspace(db.ctx.pool, `bench ${i}`);
      const integration = await withTx(db.ctx.pool, (c) =>
        insertIntegration(db.ctx, c, {
          workspaceId: ws.id,
          kind: 'google_workspace',
          category: 'teammates',
          name: 'Google',
          credentials: googleServiceAccount(),
          config: { base_url: `${emulator.url}/`, token_url: `${emulator.url}/token` },
        }),
      );
      await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, 'job_title', 'organizations.primary.title');
      await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, 'phone', 'phones.work');
      const [run] = await startRuns(db.ctx.pool, ws.id, [integration.id], { trigger: 'cli' });
      const t0 = performance.now();
      const result = await executeRun(db.ctx, run!.id);
      const wall = performance.now() - t0;
      if (result?.status !== 'succeeded' || result.created !== users) throw new Error(`sync ${result?.status}: ${result?.error ?? ''} (${result?.created} created)`);
      pages = result.pages;
      log(`${i === 0 ? 'warm-up' : `run ${i}`}: ${users} users in ${(wall / 1000).toFixed(2)} s (${Math.round(users / (wall / 1000))} users/s, ${pages} pages)`);
      if (i > 0) walls.push(wall);
    }
    const wall = median(walls);
    const floorMs = pages * latencyMs;
    return {
      users,
      pages,
      latency_ms: latencyMs,
      wall_s: round(wall / 1000, 3),
      users_per_s: Math.round(users / (wall / 1000)),
      peak_rss_mb: peakRssMb(),
      ...(latencyMs ? { floor_s: round(floorMs / 1000, 3), ratio: round(wall / floorMs, 3), goal_ratio: 1.15 } : {}),
      runs: repeat,
    };
  } finally {
    await emulator.stop();
    await db.close();
  }
}
