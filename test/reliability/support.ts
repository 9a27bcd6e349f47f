/**
 * What the reliability scenarios share: worker processes (`sigsync worker`) on a test database,
 * killed or stopped by signal; waiting on SQL counts; a directory synced from the emulated Google
 * tenant with one signature assigned to everyone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { AppContext } from '../../src/context.ts';
import { buildServer } from '../../src/api/server.ts';
import { withTx } from '../../src/db/tx.ts';
import { requestSignatureInstall } from '../../src/jobs/triggers.ts';
import type { GoogleEmulator } from '../../emulators/google.ts';
import { BIN, childEnv, DEADLINE_MS, HEAVY_TEST_MS, waitFor } from '../helpers/cli.ts';
import { afterAll, beforeAll } from 'vitest';
import { createDatabase, openTestContext, TEST_KEY } from '../helpers/db.ts';
import { assignToEveryGroup, insertSignature } from '../helpers/fixtures/signatures.ts';

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `sigsync worker` on the database; resolves once it is looking for jobs. */
export async function startWorkerProcess(url: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: childEnv({ DATABASE_URL: url, ENCRYPTION_KEY: TEST_KEY, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '8', ALLOW_INSECURE_OUTBOUND_URLS: '1', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await waitFor(async () => out.includes('looking for jobs') || (child.exitCode !== null && Promise.reject(new Error(`worker exited: ${out}`))));
  return { child, output: () => out, exited };
}

export async function killWorker(w: WorkerProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill(signal);
  return w.exited;
}

export interface WorkerDatabase {
  url: string;
  ctx: AppContext & { close(): Promise<void> };
  /** Worker processes to kill after the file. */
  workers: WorkerProcess[];
  /** Anything else to close after the file (emulators, servers). */
  closers: (() => Promise<unknown>)[];
}

/** A fresh database for one test file and a context on it; after the file, its workers and closers are stopped and the database dropped. */
export function useWorkerDatabase(): WorkerDatabase {
  const db = { url: '', ctx: undefined, workers: [], closers: [] } as unknown as WorkerDatabase;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const created = await createDatabase();
    drop = created.drop;
    db.url = created.url;
    db.ctx = await openTestContext(created.url);
  });
  afterAll(async () => {
    await Promise.all(db.workers.map((w) => killWorker(w)));
    await Promise.all(db.closers.map((close) => close()));
    await db.ctx?.close();
    await drop?.();
  });
  return db;
}

export const count = async (ctx: AppContext, sql: string, params: unknown[] = []): Promise<number> => (await ctx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

/** A signature with the job title in it, assigned to every group of the workspace. */
export async function signatureForEveryone(ctx: AppContext, workspaceId: string, titleFieldId: string): Promise<string> {
  const tree = {
    type: 'stack',
    id: 'root',
    children: [
      { type: 'text', id: 'name', tokens: [{ type: 'textToken', id: 't1', value: 'Best regards' }] },
      { type: 'text', id: 'title', tokens: [{ type: 'textToken', id: 't2', smartFieldUuid: titleFieldId }] },
    ],
  };
  const id = await insertSignature(ctx.pool, workspaceId, { draftContent: tree });
  await assignToEveryGroup(ctx.pool, workspaceId, id);
  return id;
}

/** Publishes the draft and requests the installs in one transaction, as the API does. */
export async function publish(ctx: AppContext, workspaceId: string, signatureId: string, forced = false): Promise<void> {
  await withTx(ctx.pool, async (c) => {
    await c.query(`update signatures set content = draft_content, last_published_at = now() where id = $1`, [signatureId]);
    await requestSignatureInstall(c, workspaceId, signatureId, { kinds: ['primary'], forced });
  });
}

/** The HTTP API on loopback (the server `sigsync api` runs), called with a workspace's bearer key. */
export interface ApiServer {
  base: string;
  call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
  close(): Promise<void>;
}

export async function startApi(ctx: AppContext): Promise<ApiServer> {
  const server = await buildServer(ctx);
  await server.listen({ host: '127.0.0.1', port: 0 });
  const addr = server.server.address();
  if (!addr || typeof addr === 'string') throw new Error('the API has no address');
  const base = `http://127.0.0.1:${addr.port}`;
  return {
    base,
    async call(key, method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const r = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await r.text();
      return { status: r.status, body: text ? JSON.parse(text) : null };
    },
    close: () => server.close(),
  };
}

/** Every signature the emulator received, in order, per sendAs address (lowercase). */
export function recordWrites(google: GoogleEmulator): Map<string, string[]> {
  const log = new Map<string, string[]>();
  google.events.on('write', (address: string, html: string) => {
    const list = log.get(address) ?? [];
    list.push(html);
    log.set(address, list);
  });
  return log;
}

/**
 * Samples, every `everyMs` until stopped, the largest number of `running` sync runs any one
 * integration has.
 */
export function sampleRunningRuns(ctx: AppContext, everyMs = 10): { stop(): Promise<{ samples: number; maxRunningPerIntegration: number }> } {
  let stopped = false;
  let samples = 0;
  let max = 0;
  const loop = (async () => {
    while (!stopped) {
      const n = await count(ctx, `select coalesce(max(n), 0)::int as n from (select count(*) as n from sync_runs where status = 'running' group by integration_id) r`);
      samples++;
      max = Math.max(max, n);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { samples, maxRunningPerIntegration: max };
    },
  };
}

export { DEADLINE_MS, HEAVY_TEST_MS, waitFor };
