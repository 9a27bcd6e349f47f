/**
 * What the reliability scenarios share: a test database of their own with worker processes
 * (`sigsync worker`) on it, killed or stopped by signal, and the API server; waiting on SQL counts
 * and for the job queue to drain; a workspace's emulated Google directory and Gmail, with one
 * signature assigned to everyone; the installs and the Gmail writes they made.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { AppContext } from '../../src/context.ts';
import type { IntegrationRow } from '../../src/integrations/integrations.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import type { GoogleEmulator } from '../../emulators/google.ts';
import { BIN, childEnv, DEADLINE_MS, HEAVY_TEST_MS, waitFor } from '../helpers/cli.ts';
import { afterAll, beforeAll } from 'vitest';
import { createDatabase, openTestContext, TEST_KEY } from '../helpers/db.ts';
import { connectGoogle, mapSmartField } from '../helpers/fixtures.ts';
import { assignToEveryGroup, insertSignature } from '../helpers/fixtures/signatures.ts';
import { readAnswer, startServer, type Res } from '../helpers/server.ts';

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
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
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
  /** The API server, on a context of its own, when `useWorkerDatabase` was given its settings. */
  api: ApiServer;
  /** Worker processes to kill after the file. */
  workers: WorkerProcess[];
  /** Anything else to close after the file (emulators, servers). */
  closers: (() => Promise<unknown>)[];
}

/**
 * A fresh database for one test file and a context on it; with `api`, the API server too, on a
 * context with those settings (rate limits the scenario switches off). After the file, its workers
 * are killed, its closers and the API stopped and the database dropped.
 */
export function useWorkerDatabase(opts: { api?: Record<string, string> } = {}): WorkerDatabase {
  const db = { url: '', ctx: undefined, api: undefined, workers: [], closers: [] } as unknown as WorkerDatabase;
  let drop: (() => Promise<void>) | undefined;
  let apiCtx: (AppContext & { close(): Promise<void> }) | undefined;
  beforeAll(async () => {
    const created = await createDatabase();
    drop = created.drop;
    db.url = created.url;
    db.ctx = await openTestContext(created.url);
    if (opts.api) {
      apiCtx = await openTestContext(created.url, opts.api);
      db.api = await startApi(apiCtx);
    }
  });
  afterAll(async () => {
    await Promise.all(db.workers.map((w) => killWorker(w)));
    await db.api?.close();
    await Promise.all(db.closers.map((close) => close()));
    await apiCtx?.close();
    await db.ctx?.close();
    await drop?.();
  });
  return db;
}

export const count = async (ctx: AppContext, sql: string, params: unknown[] = []): Promise<number> =>
  (await ctx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;

/** Waits until graphile-worker's queue is empty: every job run, none waiting for a retry. */
export const drained = (ctx: AppContext, intervalMs?: number): Promise<boolean> =>
  waitFor(async () => (await count(ctx, 'select count(*)::int as n from graphile_worker.jobs')) === 0, DEADLINE_MS, intervalMs);

/** The mailboxes where `signatureId` is installed. */
export const installedCount = (ctx: AppContext, signatureId: string): Promise<number> =>
  count(ctx, `select count(*)::int as n from installations where signature_id = $1 and status = 'installed'`, [signatureId]);

/**
 * A workspace's emulated Google tenant: the directory (with `directoryConfig`), Gmail for its
 * signatures, and the `job_title` smart field mapped to the directory's job title.
 */
export async function connectGoogleAndGmail(
  ctx: AppContext,
  workspaceId: string,
  googleUrl: string,
  directoryConfig?: Record<string, unknown>,
): Promise<{ directory: IntegrationRow; gmail: IntegrationRow; titleField: string }> {
  const directory = await connectGoogle(ctx, workspaceId, googleUrl, directoryConfig ? { config: directoryConfig } : {});
  const gmail = await connectGoogle(ctx, workspaceId, googleUrl, { category: 'signatures', name: 'Gmail' });
  const titleField = await mapSmartField(ctx, workspaceId, 'job_title', directory.id, 'organizations.primary.title');
  return { directory, gmail, titleField };
}

/**
 * The directory's first sync, run by a worker process of `db` that is stopped (SIGTERM) once the
 * run succeeded and the queue drained; answers how that worker exited.
 */
export async function syncByWorkerProcess(
  db: WorkerDatabase,
  workspaceId: string,
  directoryId: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { ctx } = db;
  await startRuns(ctx.pool, workspaceId, [directoryId], { trigger: 'api' });
  const warm = await startWorkerProcess(db.url);
  db.workers.push(warm);
  await waitFor(
    async () => (await count(ctx, `select count(*)::int as n from sync_runs where integration_id = $1 and status = 'succeeded'`, [directoryId])) === 1,
  );
  await drained(ctx);
  return killWorker(warm, 'SIGTERM');
}

/** Gmail's signature writes to the people's own mailboxes (the generated tenant's `user…` addresses): the addresses written, and the writes in all. */
export function primaryWrites(google: GoogleEmulator): { addresses: string[]; writes: number } {
  const primaries = [...google.writes.entries()].filter(([a]) => a.startsWith('user'));
  return { addresses: primaries.map(([a]) => a), writes: primaries.reduce((a, [, n]) => a + n, 0) };
}

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

/** The HTTP API on loopback (the server `sigsync api` runs), called with a workspace's bearer key. */
export interface ApiServer {
  base: string;
  call(key: string, method: string, path: string, body?: unknown): Promise<Res>;
  close(): Promise<void>;
}

export async function startApi(ctx: AppContext): Promise<ApiServer> {
  const { server, base } = await startServer(ctx);
  return {
    base,
    async call(key, method, path, body) {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      return readAnswer(await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }));
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
      const n = await count(
        ctx,
        `select coalesce(max(n), 0)::int as n from (select count(*) as n from sync_runs where status = 'running' group by integration_id) r`,
      );
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
