/**
 * What benchmarks share: a real Postgres (DATABASE_URL, or embedded Postgres in a temp directory),
 * migrated, with an AppContext on it; emulated tenants in a child process, so that the figures of
 * the process under test (peak RSS above all) are its own; medians.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { makeWorkerUtils } from 'graphile-worker';
import { createLogger } from '../src/log.ts';
import { loadConfig } from '../src/config.ts';
import { Secrets } from '../src/crypto/secrets.ts';
import { createMetrics } from '../src/metrics.ts';
import { createPool } from '../src/db/pool.ts';
import { migrate } from '../src/db/migrate.ts';
import { startEmbedded } from '../src/db/embedded.ts';
import { graphileLogger } from '../src/graphileLogger.ts';
import type { AppContext } from '../src/context.ts';
import { postmasterPid, treeCpuSeconds } from './cpu.ts';
import { appendIndexUsage } from '../scripts/index-usage.ts';

export interface BenchDb {
  ctx: AppContext;
  url: string;
  /** The key credentials are sealed with (hex), for worker processes started apart (ENCRYPTION_KEY). */
  encryptionKey: string;
  /** CPU seconds used so far by Postgres (postmaster and backends) on this host; null when it runs elsewhere. */
  postgresCpuSeconds(): number | null;
  close(): Promise<void>;
}

export async function openBenchDb(): Promise<BenchDb> {
  const logger = createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn');
  let adminUrl = process.env.DATABASE_URL;
  let stopCluster: (() => Promise<void>) | undefined;
  let tmp: string | undefined;
  if (!adminUrl) {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'sigsync-bench-'));
    await fs.chmod(tmp, 0o755);
    const cluster = await startEmbedded(tmp, logger);
    adminUrl = cluster.ownerUrl;
    stopCluster = cluster.stop;
  }
  const name = `sigsync_bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  await migrate(url, logger);
  const pool = createPool(url, 20);
  const jobs = await makeWorkerUtils({ pgPool: pool, logger: graphileLogger(logger) });
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const ctx: AppContext = {
    // The emulated tenants are on loopback, which integration URLs may use only with this flag.
    config: loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'warn', ENCRYPTION_KEY: encryptionKey, ALLOW_INSECURE_OUTBOUND_URLS: '1' }),
    pool,
    logger,
    secrets: new Secrets(Buffer.from(encryptionKey, 'hex')),
    metrics: createMetrics(),
    jobs,
  };
  const postmaster = await postmasterPid(pool);
  return {
    ctx,
    url,
    encryptionKey,
    postgresCpuSeconds: () => (postmaster === null ? null : treeCpuSeconds(postmaster)),
    async close() {
      await jobs.release();
      await pool.end();
      // BENCH_INDEX_USAGE=FILE: the scenario's index scans and sizes, read once its sessions have
      // ended (scripts/index-usage.ts sums them): which indexes its queries used, which it only kept up to date.
      if (process.env.BENCH_INDEX_USAGE) await appendIndexUsage(url, process.env.BENCH_INDEX_USAGE, `bench:${process.argv.slice(2).join(' ')}`);
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
      await stopCluster?.();
      if (tmp) await fs.rm(tmp, { recursive: true, force: true });
    },
  };
}

export interface EmulatorProcess {
  url: string;
  /** The emulator's process id, for its CPU seconds (bench/cpu.ts). */
  pid: number;
  /** Everything the emulator announced when it was ready (its url, and per provider what a client needs). */
  ready: Record<string, unknown>;
  /** Sends a control command (knobs, mutations) and waits for its answer. */
  send(cmd: Record<string, unknown>): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Starts bench/emulator.ts in a child process. */
export async function startEmulatorProcess(args: Record<string, string | number>): Promise<EmulatorProcess> {
  const child: ChildProcess = spawn(process.execPath, [path.join(import.meta.dirname, 'emulator.ts'), JSON.stringify(args)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let buffer = '';
  const waiting: ((line: Record<string, unknown>) => void)[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    buffer += d.toString();
    let i: number;
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      waiting.shift()?.(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const next = () => new Promise<Record<string, unknown>>((resolve) => waiting.push(resolve));
  const ready = await next();
  return {
    url: String(ready.url),
    pid: child.pid!,
    ready,
    send: (cmd) => {
      const p = next();
      child.stdin!.write(JSON.stringify(cmd) + '\n');
      return p;
    },
    stop: async () => {
      const done = new Promise((r) => child.on('close', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}

/** Peak resident set size of this process so far, in MB. */
export function peakRssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** Waits for `promise`, or rejects after `ms` naming what it waited for: no benchmark step waits forever. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `fn` every 50 ms until it answers true, or throws after `timeoutMs` naming what it waited for. */
export async function until(fn: () => Promise<boolean>, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`${what}: not met after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface WorkerProcesses {
  pids: number[];
  stop(): Promise<void>;
}

/**
 * Starts `count` `sigsync worker` processes of `concurrency` jobs each on the bench database, and
 * waits until each has registered (worker_heartbeats), so that measuring starts with them up.
 */
/** Node options for the worker processes (BENCH_WORKER_NODE_ARGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: where a worker's CPU goes). */
const workerNodeArgs = (): string[] => (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);

export async function startWorkerProcesses(db: BenchDb, count: number, concurrency: number): Promise<WorkerProcesses> {
  const heartbeats = async () => (await db.ctx.pool.query<{ n: number }>('select count(*)::int as n from worker_heartbeats')).rows[0]!.n;
  const before = await heartbeats();
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    ENCRYPTION_KEY: db.encryptionKey,
    WORKER_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'warn',
    ALLOW_INSECURE_OUTBOUND_URLS: '1',
  };
  const root = path.resolve(import.meta.dirname, '..');
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, [...workerNodeArgs(), path.join(root, 'bin', 'sigsync.js'), 'worker'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] }),
  );
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null) return;
        const closed = new Promise((r) => child.once('close', r));
        child.kill('SIGTERM');
        await closed;
      }),
    );
  };
  try {
    await until(async () => (await heartbeats()) >= before + count, 120_000, 'the worker processes starting');
  } catch (err) {
    await stop();
    throw err;
  }
  return { pids: children.map((c) => c.pid!), stop };
}
