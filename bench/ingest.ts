/**
 * `ingest`: 100,000 teammates with addresses and smart-field values through the engine's write path
 * (src/sync/write.ts, pages of 500, one transaction each), against a raw COPY of the same rows into
 * an unindexed table in the same database: ratio = write path / COPY. No provider is involved.
 *
 *   npm run bench -- ingest [--users 100000]
 *
 * A second floor, `copy_schema_s`, is what the schema itself costs: the same rows COPYed straight into
 * the real tables (teammates, their sources, emails, smart-field values, the run's seen list and the
 * teammate.created events, with every index, foreign key and trigger they have), one COPY per table
 * in one transaction. No write path can beat it without changing the schema; `ratio_schema` is the
 * write path against it, the share of the cost that is the code's own.
 *
 * `cpu` holds the CPU seconds of this process and of Postgres over the write path (medians; there is
 * no emulator), and `stage_ms` where the write path's time went, per stage (src/sync/timing.ts).
 */
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { DirectoryUser } from '../connectors/types.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/integrations.ts';
import { startRuns } from '../src/integrations/syncRuns.ts';
import { SyncStatistics } from '../src/sync/stats.ts';
import { StageTimer } from '../src/sync/timing.ts';
import { writePage } from '../src/sync/write.ts';
import { medianCpu, startCpuMeter, type CpuFigures } from './cpu.ts';
import { googleServiceAccount, mapSmartFieldSql } from './fixtures.ts';
import type { BenchArgs, Figures } from './types.ts';
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

/** A workspace with a Google integration, its two mapped fields, and a run of it. */
async function setup(db: BenchDb, name: string) {
  const ws = await createWorkspace(db.ctx.pool, name);
  const integration = await withTx(db.ctx.pool, (c) =>
    insertIntegration(db.ctx, c, {
      workspaceId: ws.id,
      kind: 'google_workspace',
      category: 'teammates',
      name: 'G',
      credentials: googleServiceAccount(),
      config: {},
    }),
  );
  const fields = await Promise.all(
    [
      ['job_title', 'organizations.primary.title'],
      ['phone', 'phones.work'],
    ].map(async ([slug, attribute]) => ({
      id: await mapSmartFieldSql(db.ctx.pool, ws.id, integration.id, slug!, attribute!),
      attribute: attribute!,
      kind: 'text' as const,
    })),
  );
  const [run] = await startRuns(db.ctx.pool, ws.id, [integration.id], { trigger: 'cli' });
  return { ws, integration, fields, run: run! };
}

async function writePath(db: BenchDb, users: number, round_: number): Promise<{ ms: number; cpu: CpuFigures; stageMs: Record<string, number> }> {
  const { ws, integration, fields, run } = await setup(db, `ingest ${round_}`);
  // As the engine does: each page one transaction, statistics refreshed as the run grows the tables.
  const statistics = new SyncStatistics();
  const timer = new StageTimer();
  const cpu = await startCpuMeter(db.ctx.pool, null);
  const t0 = performance.now();
  for (let p = 0; p < users; p += PAGE) {
    const page = Array.from({ length: Math.min(PAGE, users - p) }, (_, k) => user(p + k));
    const created = await withTx(db.ctx.pool, async (c) => {
      await c.query('set local synchronous_commit = off');
      return (
        await writePage(
          c,
          { workspaceId: ws.id, integrationId: integration.id, runId: run.id, category: 'teammates', fields, groupIds: new Map() },
          page,
          [],
          timer,
        )
      ).created;
    });
    await statistics.afterPage(db.ctx.pool, created, timer);
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

/** The floor the schema sets: the same rows COPYed into the real tables, with their indexes, keys and triggers. */
async function schemaCopy(db: BenchDb, users: number, round_: number): Promise<number> {
  const { ws, integration, fields, run } = await setup(db, `ingest copy ${round_}`);
  const fieldIds = Object.fromEntries(fields.map((f) => [f.attribute, f.id]));
  // Ids and payloads are made before the clock starts: the floor is the database's work.
  const rows = {
    teammates: [] as string[],
    teammate_sources: [] as string[],
    emails: [] as string[],
    sync_run_seen: [] as string[],
    events: [] as string[],
  };
  const now = new Date().toISOString();
  for (let i = 0; i < users; i++) {
    const u = user(i);
    const id = crypto.randomUUID();
    const values = Object.fromEntries(Object.entries(u.attributes).map(([k, v]) => [fieldIds[k], { value: v, integration_id: integration.id }]));
    // COPY's text format reads a backslash as an escape: the document's own are doubled.
    rows.teammates.push(`${id}\t${ws.id}\t${u.displayName}\t${u.givenName}\t${u.familyName}\t${JSON.stringify(values).replaceAll('\\', '\\\\')}\n`);
    rows.teammate_sources.push(`${ws.id}\t${integration.id}\t${u.externalId}\t${id}\t${'f'.repeat(40)}\n`);
    const emails = [u.primaryEmail!, ...u.aliases].map((address, k) => ({ uuid: crypto.randomUUID(), address, primary: k === 0 }));
    for (const e of emails) rows.emails.push(`${e.uuid}\t${ws.id}\t${id}\t${e.address}\t${e.primary}\t${integration.id}\n`);
    rows.sync_run_seen.push(`${run.id}\t${u.externalId}\n`);
    const payload = { type: 'teammate.created', occurred_at: now, teammate: { uuid: id, display_name: u.displayName }, emails };
    rows.events.push(`${ws.id}\tteammate.created\t${JSON.stringify(payload)}\n`);
  }
  const columns: Record<keyof typeof rows, string> = {
    teammates: 'id, workspace_id, display_name, given_name, family_name, field_values',
    teammate_sources: 'workspace_id, integration_id, external_id, teammate_id, fingerprint',
    emails: 'id, workspace_id, teammate_id, address, is_primary, integration_id',
    sync_run_seen: 'run_id, external_id',
    events: 'workspace_id, type, payload',
  };
  const client = await db.ctx.pool.connect();
  try {
    const t0 = performance.now();
    await client.query('begin');
    await client.query('set local synchronous_commit = off');
    for (const table of Object.keys(rows) as (keyof typeof rows)[]) {
      await pipeline(Readable.from(rows[table]), client.query(copyFrom(`copy ${table} (${columns[table]}) from stdin`)));
    }
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
    const schemaCopies: number[] = [];
    const cpus: CpuFigures[] = [];
    let stageMs: Record<string, number> = {};
    for (let i = 0; i <= repeat; i++) {
      const w = await writePath(db, users, i);
      const c = await rawCopy(db, users, i);
      const s = await schemaCopy(db, users, i);
      log(
        `${i === 0 ? 'warm-up' : `run ${i}`}: write path ${(w.ms / 1000).toFixed(2)} s, raw COPY ${(c / 1000).toFixed(2)} s, COPY into the schema ${(s / 1000).toFixed(2)} s`,
      );
      if (i > 0) {
        writes.push(w.ms);
        copies.push(c);
        schemaCopies.push(s);
        cpus.push(w.cpu);
        stageMs = w.stageMs;
      }
    }
    const w = median(writes);
    const c = median(copies);
    const s = median(schemaCopies);
    return {
      users,
      write_path_s: round(w / 1000, 3),
      copy_s: round(c / 1000, 3),
      copy_schema_s: round(s / 1000, 3),
      ratio_schema: round(w / s, 2),
      users_per_s: Math.round(users / (w / 1000)),
      ratio: round(w / c, 2),
      goal_ratio: 10,
      stretch_ratio: 2,
      goal_ratio_schema: 1.2,
      cpu: medianCpu(cpus),
      stage_ms: stageMs,
      runs: repeat,
    };
  } finally {
    await db.close();
  }
}
