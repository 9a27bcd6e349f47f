/**
 * `ingest`: 100,000 teammates with addresses and smart-field values through the engine's write path
 * (src/sync/write.ts, pages of 500, one transaction each), against a raw COPY of the same rows into
 * an unindexed table in the same database: ratio = write path / COPY. No provider is involved.
 *
 *   npm run bench -- ingest [--users 100000]
 *
 * `cpu` holds the CPU seconds of this process and of Postgres over the write path (medians; there is
 * no emulator), and `stage_ms` where the write path's time went, per stage (src/sync/timing.ts).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { DirectoryUser } from '../connectors/types.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/repository.ts';
import { startRuns } from '../src/sync/runs.ts';
import { SyncStatistics } from '../src/sync/stats.ts';
import { StageTimer } from '../src/sync/timing.ts';
import { writePage } from '../src/sync/write.ts';
import { medianCpu, startCpuMeter, type CpuFigures } from './cpu.ts';
import { googleServiceAccount, mapSmartFieldSql } from './fixtures.ts';
import type { BenchArgs, Figures } from './scenarios.ts';
import { openBenchDb, type BenchDb } from './support.ts';
import { median, round } from './stats.ts';

const PAGE = 500;

function user(i: number): DirectoryUser {
  return {
    externalId: `u${i}`,
    primaryEmail: `user${i}@example.test`,
    aliases: i % 10 === 0 ? [`alias${i}@example.test`] : [],
    givenName: `Given${i}`,
    familyName: `Family${i}`,
    displayName: `Given${i} Family${i}`,
    removed: false,
    attributes: { 'organizations.primary.title': `Title ${i % 50}`, 'phones.work': `+1 555 ${String(i).padStart(7, '0')}` },
    groups: [],
    orgUnits: [],
    photo: null,
  };
}

async function writePath(db: BenchDb, users: number, round_: number): Promise<{ ms: number; cpu: CpuFigures; stageMs: Record<string, number> }> {
  const ws = await createWorkspace(db.ctx.pool, `ingest ${round_}`);
  const integration = await withTx(db.ctx.pool, (c) =>
    insertIntegration(db.ctx, c, { workspaceId: ws.id, kind: 'google_workspace', category: 'teammates', name: 'G', credentials: googleServiceAccount(), config: {} }),
  );
  const fields = [
    { id: await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, 'job_title', 'organizations.primary.title'), attribute: 'organizations.primary.title', kind: 'text' as const },
    { id: await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, 'phone', 'phones.work'), attribute: 'phones.work', kind: 'text' as const },
  ];
  const [run] = await startRuns(db.ctx.pool, ws.id, [integration.id], { trigger: 'cli' });
  // As the engine does: each page one transaction, statistics refreshed as the run grows the tables.
  const statistics = new SyncStatistics();
  const timer = new StageTimer();
  const cpu = await startCpuMeter(db.ctx.pool, null);
  const t0 = performance.now();
  for (let p = 0; p < users; p += PAGE) {
    const page = Array.from({ length: Math.min(PAGE, users - p) }, (_, k) => user(p + k));
    const created = await withTx(db.ctx.pool, async (c) => {
      await c.query('set local synchronous_commit = off');
      return (await writePage(c, { workspaceId: ws.id, integrationId: integration.id, runId: run!.id, category: 'teammates', fields, groupIds: new Map() }, page, [], timer)).created;
    });
    await statistics.afterPage(db.ctx.pool, created);
  }
  return { ms: performance.now() - t0, cpu: cpu(), stageMs: timer.ms };
}

/** The same rows (teammate, address, alias, two values) as text lines, COPYed into an unindexed table. */
async function rawCopy(db: BenchDb, users: number, round_: number): Promise<number> {
  const table = `ingest_copy_${round_}`;
  await db.ctx.pool.query(`create table ${table} (kind text, ext_id text, a text, b text, c text)`);
  const client = await db.ctx.pool.connect();
  try {
    const t0 = performance.now();
    await client.query('begin');
    await client.query('set local synchronous_commit = off');
    const lines = function* () {
      for (let i = 0; i < users; i++) {
        const u = user(i);
        let chunk = `teammate\t${u.externalId}\t${u.displayName}\t${u.givenName}\t${u.familyName}\n`;
        chunk += `email\t${u.externalId}\t${u.primaryEmail}\tprimary\t\\N\n`;
        for (const a of u.aliases) chunk += `email\t${u.externalId}\t${a}\talias\t\\N\n`;
        for (const [k, v] of Object.entries(u.attributes)) chunk += `value\t${u.externalId}\t${k}\t${v}\t\\N\n`;
        yield chunk;
      }
    };
    await pipeline(Readable.from(lines()), client.query(copyFrom(`copy ${table} from stdin`)));
    await client.query('commit');
    return performance.now() - t0;
  } finally {
    client.release();
  }
}

export async function ingestScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const users = Number(options.users ?? (quick ? 10000 : 100000));
  const repeat = Number(options.repeat ?? (quick ? 1 : 3));
  const db = await openBenchDb();
  try {
    const writes: number[] = [];
    const copies: number[] = [];
    const cpus: CpuFigures[] = [];
    let stageMs: Record<string, number> = {};
    for (let i = 0; i <= repeat; i++) {
      const w = await writePath(db, users, i);
      const c = await rawCopy(db, users, i);
      log(`${i === 0 ? 'warm-up' : `run ${i}`}: write path ${(w.ms / 1000).toFixed(2)} s, raw COPY ${(c / 1000).toFixed(2)} s`);
      if (i > 0) {
        writes.push(w.ms);
        copies.push(c);
        cpus.push(w.cpu);
        stageMs = w.stageMs;
      }
    }
    const w = median(writes);
    const c = median(copies);
    return { users, write_path_s: round(w / 1000, 3), copy_s: round(c / 1000, 3), users_per_s: Math.round(users / (w / 1000)), ratio: round(w / c, 2), goal_ratio: 2, cpu: medianCpu(cpus), stage_ms: stageMs, runs: repeat };
  } finally {
    await db.close();
  }
}
