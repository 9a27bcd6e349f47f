/**
 * `sync-delta`: Microsoft Entra, a full sync of N users, then 1% of them change and an incremental
 * (delta) sync runs. Goal: the delta run takes ≤ 5% of the full run's wall time. The emulated tenant
 * runs in its own process; `cpu` holds the CPU seconds of the worker (this process), Postgres and
 * the emulator for each run.
 *
 *   npm run bench -- sync-delta [--users 100000] [--changed 0.01]
 */
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/integrations.ts';
import { executeRun } from '../src/sync/engine.ts';
import { startRuns } from '../src/integrations/syncRuns.ts';
import { mapSmartFieldSql } from './fixtures.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb, startEmulatorProcess } from './support.ts';
import { round } from './stats.ts';
import { startCpuMeter } from './cpu.ts';

export async function syncDeltaScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const users = Number(options.users ?? (quick ? 10000 : 100000));
  const share = Number(options.changed ?? 0.01);
  const db = await openBenchDb();
  const emulator = await startEmulatorProcess({ provider: 'microsoft', users });
  try {
    const ws = await createWorkspace(db.ctx.pool, 'delta');
    const { credentials, config } = emulator.ready as { credentials: Record<string, string>; config: Record<string, string> };
    const integration = await withTx(db.ctx.pool, (c) =>
      insertIntegration(db.ctx, c, { workspaceId: ws.id, kind: 'microsoft_entra', category: 'teammates', name: 'Entra', credentials, config }),
    );
    await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, 'job_title', 'jobTitle');
    const sync = async () => {
      const [run] = await startRuns(db.ctx.pool, ws.id, [integration.id], { trigger: 'cli' });
      const cpu = await startCpuMeter(db.ctx.pool, emulator.pid);
      const t0 = performance.now();
      const r = await executeRun(db.ctx, run!.id);
      if (r?.status !== 'succeeded') throw new Error(`sync ${r?.status}: ${r?.error ?? ''}`);
      return { r, wall: performance.now() - t0, cpu: cpu() };
    };
    const full = await sync();
    log(`full: ${users} users in ${(full.wall / 1000).toFixed(2)} s (${full.r.pages} pages)`);
    const { changed } = (await emulator.send({ cmd: 'mutate', share })) as { changed: number };
    const delta = await sync();
    log(`delta: ${changed} changed users in ${(delta.wall / 1000).toFixed(3)} s (mode ${delta.r.mode}, updated ${delta.r.updated})`);
    return {
      users,
      changed,
      full_wall_s: round(full.wall / 1000, 3),
      delta_wall_s: round(delta.wall / 1000, 3),
      delta_mode: delta.r.mode,
      delta_updated: delta.r.updated,
      delta_pages: delta.r.pages,
      ratio: round(delta.wall / full.wall, 4),
      goal_ratio: 0.05,
      cpu: { full: full.cpu, delta: delta.cpu },
      stage_ms: { full: full.r.stage_ms, delta: delta.r.stage_ms },
    };
  } finally {
    await emulator.stop();
    await db.close();
  }
}
