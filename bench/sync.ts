/**
 * Directory sync against the emulated Google tenant in another process, through the real SDK and
 * the engine's write path into a real Postgres.
 *
 *   npm run bench -- sync-google [--users 20000] [--latency 0] [--repeat 3]
 *   npm run bench -- sync-full [--users 100000] [--latency 50]
 *   npm run bench -- sync-nochange [--users 100000] [--latency 50]
 *
 * Figures: users/s, pages, and the process's peak RSS; with --latency, the floor is pages × latency
 * (the time the provider alone takes) and `ratio` = wall / floor. `cpu` holds the CPU seconds of the
 * worker (this process), Postgres and the emulator over one measured run (medians), and the load
 * average; `stage_ms` where the measured run's time went (src/sync/timing.ts).
 *
 * With --latency, `listing_alone` is the same pages listed once more through the same connector
 * and SDK with nothing written: what the provider's answers and their parsing take by themselves
 * (`wall_s`, and its `ratio` to the floor), measured after the runs and after their peak RSS.
 */
import { executeRun } from '../src/sync/engine.ts';
import { startRuns } from '../src/integrations/syncRuns.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { buildConnector, insertIntegration, type IntegrationRow } from '../src/integrations/integrations.ts';
import type { DirectorySource } from '../connectors/types.ts';
import { googleServiceAccount, mapSmartFieldSql } from './fixtures.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb, peakRssMb, startEmulatorProcess, type BenchDb } from './support.ts';
import { median, round } from './stats.ts';
import { medianCpu, startCpuMeter, type CpuFigures } from './cpu.ts';

/** The smart fields each benchmark workspace maps: field, directory attribute. */
const MAPPED = [
  ['job_title', 'organizations.primary.title'],
  ['phone', 'phones.work'],
] as const;

interface SyncOptions {
  users: number;
  latencyMs: number;
  repeat: number;
  /** Measure a second sync of an unchanged directory instead of the first one. */
  nochange: boolean;
}

async function syncBench(o: SyncOptions, log: (l: string) => void): Promise<Figures> {
  const db = await openBenchDb();
  const emulator = await startEmulatorProcess({ users: o.users, latencyMs: o.latencyMs });
  try {
    const walls: number[] = [];
    const cpus: CpuFigures[] = [];
    let stageMs: Record<string, number> = {};
    let pages = 0;
    let second = { updated: 0, created: 0, deleted: 0, events: 0 };
    let last: IntegrationRow | undefined;
    // Warm-up run (not counted), then `repeat` measured runs, each into a fresh workspace.
    for (let i = 0; i <= o.repeat; i++) {
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
      for (const [field, attribute] of MAPPED) await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, field, attribute);
      const sync = async () => {
        const [run] = await startRuns(db.ctx.pool, ws.id, [integration.id], { trigger: 'cli' });
        const cpu = await startCpuMeter(db.ctx.pool, emulator.pid);
        const t0 = performance.now();
        const result = await executeRun(db.ctx, run!.id);
        const wall = performance.now() - t0;
        if (result?.status !== 'succeeded') throw new Error(`sync ${result?.status}: ${result?.error ?? ''}`);
        return { result, wall, cpu: cpu() };
      };
      let { result, wall, cpu } = await sync();
      if (o.nochange) {
        const eventsBefore = (await db.ctx.pool.query<{ n: number }>('select count(*)::int as n from events where workspace_id = $1', [ws.id])).rows[0]!.n;
        ({ result, wall, cpu } = await sync());
        const eventsAfter = (await db.ctx.pool.query<{ n: number }>('select count(*)::int as n from events where workspace_id = $1', [ws.id])).rows[0]!.n;
        second = { updated: result.updated, created: result.created, deleted: result.deleted, events: eventsAfter - eventsBefore };
      } else if (result.created !== o.users) {
        throw new Error(`created ${result.created} of ${o.users}`);
      }
      pages = result.pages;
      last = integration;
      log(
        `${i === 0 ? 'warm-up' : `run ${i}`}: ${o.users} users in ${(wall / 1000).toFixed(2)} s (${Math.round(o.users / (wall / 1000))} users/s, ${pages} pages)`,
      );
      if (i > 0) {
        walls.push(wall);
        cpus.push(cpu);
        stageMs = result.stage_ms;
      }
    }
    const wall = median(walls);
    const floorMs = pages * o.latencyMs;
    const peakRss = peakRssMb();
    const alone = o.latencyMs ? await listingAlone(db, last!, log) : undefined;
    return {
      users: o.users,
      pages,
      latency_ms: o.latencyMs,
      wall_s: round(wall / 1000, 3),
      users_per_s: Math.round(o.users / (wall / 1000)),
      peak_rss_mb: peakRss,
      ...(o.nochange ? { second_run: second } : {}),
      ...(o.latencyMs
        ? {
            floor_s: round(floorMs / 1000, 3),
            ratio: round(wall / floorMs, 3),
            ...(o.nochange ? { goal_ratio: 1.15 } : { goal_ratio: 1.5, stretch_ratio: 1.15 }),
          }
        : {}),
      ...(o.nochange ? {} : { goal_peak_rss_mb: 300 }),
      ...(alone ? { listing_alone: { pages: alone.pages, wall_s: round(alone.ms / 1000, 3), ratio: round(alone.ms / floorMs, 3) } } : {}),
      cpu: medianCpu(cpus),
      stage_ms: stageMs,
      runs: o.repeat,
    };
  } finally {
    await emulator.stop();
    await db.close();
  }
}

/** Every users page listed through the integration's connector, nothing written: pages and ms. */
async function listingAlone(db: BenchDb, integration: IntegrationRow, log: (l: string) => void): Promise<{ pages: number; ms: number }> {
  const source = buildConnector<DirectorySource>(db.ctx, integration, db.ctx.logger);
  const t0 = performance.now();
  let pages = 0;
  let pageToken: string | null = null;
  do {
    pageToken = (await source.fetchUsersPage({ pageToken: pageToken ?? undefined, attributes: MAPPED.map(([, attribute]) => attribute) })).nextPageToken;
    pages++;
  } while (pageToken);
  const ms = performance.now() - t0;
  log(`the listing alone: ${pages} pages in ${(ms / 1000).toFixed(2)} s`);
  return { pages, ms };
}

const num = (v: string | boolean | undefined, d: number) => (v === undefined || v === true ? d : Number(v));

/** `sync-google`: the directory sync at a chosen size (default 20,000 users, no latency). */
export const syncGoogleScenario = ({ quick, options, log }: BenchArgs) =>
  syncBench(
    { users: num(options.users, quick ? 2000 : 20000), latencyMs: num(options.latency, 0), repeat: num(options.repeat, quick ? 1 : 3), nochange: false },
    log,
  );

/** `sync-full`: 100,000 users, 500 per page, 50 ms per page; wall vs pages × latency, peak RSS. */
export const syncFullScenario = ({ quick, options, log }: BenchArgs) =>
  syncBench(
    { users: num(options.users, quick ? 10000 : 100000), latencyMs: num(options.latency, 50), repeat: num(options.repeat, quick ? 1 : 2), nochange: false },
    log,
  );

/** `sync-nochange`: the same directory synced twice; the second run writes nothing. */
export const syncNoChangeScenario = ({ quick, options, log }: BenchArgs) =>
  syncBench(
    { users: num(options.users, quick ? 10000 : 100000), latencyMs: num(options.latency, 50), repeat: num(options.repeat, quick ? 1 : 2), nochange: true },
    log,
  );
