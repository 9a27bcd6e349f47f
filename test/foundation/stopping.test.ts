/**
 * Stopping and starting `sigsync serve` as a person at a terminal does: Ctrl-C signals the whole
 * foreground process group (here: each server runs in a group of its own, and the test signals the
 * group), whether the server is running or still starting, under this Node, through the launcher
 * in bin/sigsync.js (the machine's older `node`) or through `npm start`. Each ends with one line and exit 0, with no
 * Postgres error, stack or SQL. And one server per DATA_DIR: a second one refuses with one line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, DEADLINE_MS, HEAVY_TEST_MS, runCli, waitFor } from '../helpers/cli.ts';
import { freePort } from '../../src/db/embedded.ts';
import { lockDataDir } from '../../src/serverLock.ts';

interface Server {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** `serve` in a process group of its own, as a terminal's foreground job is; `npm start` with `node: 'npm'`. */
function serve(node: string, dataDir: string, port: number): Server {
  const args = node === 'npm' ? ['start'] : [BIN, 'serve'];
  const env = childEnv({ DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' });
  const child = spawn(node, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * Ctrl-C (SIGINT to every process of the group), then the stop is clean: one line, no Postgres
 * errors, no stack, exit 0. Answers what was printed from the signal on.
 */
async function ctrlCStopsCleanly(server: Server): Promise<string> {
  const at = server.output().length;
  process.kill(-server.child.pid!, 'SIGINT');
  const code = await server.exited;
  const after = server.output().slice(at);
  const lines = after.trim().split('\n').filter(Boolean);
  expect(lines, after).toHaveLength(1);
  expect(after).not.toMatch(
    /terminating connection|administrator command|writing clicks failed|second signal|\n\s+at |CREATE|INSERT|"level":"(warn|error|fatal)"/,
  );
  expect(code, after).toBe(0);
  return after;
}

/** Serving, with the sandbox's demo done: its welcome printed to the last line (it arrives in several chunks). */
async function ready(server: Server, port: number): Promise<void> {
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, DEADLINE_MS, 200);
    await waitFor(async () => server.output().includes('--url http://127.0.0.1:8080/hooks\n'), DEADLINE_MS, 50);
  } catch (e) {
    throw new Error(`${String(e)}; the server printed:\n${server.output()}`);
  }
}

describe('stopping and starting serve', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-stop-'));
  fs.chmodSync(dataDir, 0o755);
  const running: Server[] = [];
  afterAll(async () => {
    for (const s of running) {
      try {
        process.kill(-s.child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'Ctrl-C during the first start (initdb) stops once started: one line, exit 0, no SQL or stack',
    async () => {
      const server = serve(process.execPath, dataDir, await freePort());
      running.push(server);
      await waitFor(async () => server.output().includes('initialising embedded Postgres cluster'), DEADLINE_MS, 20);
      const after = await ctrlCStopsCleanly(server);
      expect(after).toMatch(/^SIGINT: stopping once started/);
      expect(fs.existsSync(path.join(dataDir, 'server.lock'))).toBe(false);
    },
    HEAVY_TEST_MS,
  );

  it(
    'Ctrl-C while it runs (sandbox, worker, clicks writer): one line, exit 0, no Postgres errors',
    async () => {
      const port = await freePort();
      const server = serve(process.execPath, dataDir, port);
      running.push(server);
      await ready(server, port);
      await ctrlCStopsCleanly(server);
    },
    HEAVY_TEST_MS,
  );

  it(
    'a second server on the same DATA_DIR refuses with one line, and the first one keeps serving',
    async () => {
      const port = await freePort();
      const first = serve(process.execPath, dataDir, port);
      running.push(first);
      await ready(first, port);
      const second = await runCli(['serve'], { DATA_DIR: dataDir, PORT: String(await freePort()), LOG_LEVEL: 'info' });
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr.trim().split('\n')).toHaveLength(1);
      expect(second.stderr).toContain(
        `DATA_DIR: another sigsync server (pid ${first.child.pid}) is running on ${dataDir}; stop it first, or give this one its own DATA_DIR`,
      );
      const completed = () => first.output().split('"msg":"request completed"').length;
      const before = completed();
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
      // The request's own log line is written after its answer: wait for it, so that it is not read as stop output.
      await waitFor(async () => completed() > before);
      expect(fs.readFileSync(path.join(dataDir, 'server.lock'), 'utf8').trim()).toBe(String(first.child.pid));
      await ctrlCStopsCleanly(first);
    },
    HEAVY_TEST_MS,
  );

  it(
    'through the launcher (an older node first on PATH), which gets the same Ctrl-C and forwards it: exit 0, not "second signal"',
    async () => {
      const port = await freePort();
      const server = serve('node', dataDir, port);
      running.push(server);
      await ready(server, port);
      await ctrlCStopsCleanly(server);
    },
    HEAVY_TEST_MS,
  );

  it(
    'npm start, as the README runs it: Ctrl-C stops it with one line and npm exits 0, not 130',
    async () => {
      const port = await freePort();
      const server = serve('npm', dataDir, port);
      running.push(server);
      await ready(server, port);
      await ctrlCStopsCleanly(server);
    },
    HEAVY_TEST_MS,
  );

  it('takes over a stale lock (its process gone, or not a sigsync server), and refuses a live one', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-lock-'));
    try {
      const file = path.join(dir, 'server.lock');
      const gone = spawn(process.execPath, ['-e', '']);
      const deadPid = gone.pid!;
      return new Promise<void>((resolve, reject) =>
        gone.on('close', () => {
          try {
            fs.writeFileSync(file, `${deadPid}\n`);
            const a = lockDataDir(dir);
            expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
            a.release();
            expect(fs.existsSync(file)).toBe(false);
            // A live process that is not a sigsync server (this test runner) holds no lock either.
            fs.writeFileSync(file, `${process.ppid}\n`);
            lockDataDir(dir).release();
            fs.writeFileSync(file, 'garbage');
            lockDataDir(dir).release();
            resolve();
          } catch (e) {
            reject(e as Error);
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
        }),
      );
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  });
});
