/**
 * `sigsync serve` as a real process on embedded Postgres: ready, shared with a second CLI process,
 * SIGTERM exits 0 and leaves no postgres behind, and a restart finds the same data; a taken port is
 * refused before a database is built.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { DEADLINE_MS, HEAVY_TEST_MS, runCli, spawnCli, waitFor } from '../helpers/cli.ts';
import { freePort } from '../../src/db/embedded.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function startServe(dataDir: string, port: number) {
  const child = spawnCli(['serve'], { DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', SANDBOX: '0' });
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, DEADLINE_MS, 200);
  return child;
}

async function stop(child: ReturnType<typeof spawnCli>): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  const done = new Promise<number | null>((r) => child.on('close', r));
  child.kill('SIGTERM');
  return { code: await done, ms: Date.now() - t0 };
}

describe('serve lifecycle on embedded Postgres', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-serve-'));
  fs.chmodSync(dataDir, 0o755);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it(
    'serves, shares its cluster with the CLI, exits 0 on SIGTERM leaving no postgres, and keeps data across restarts',
    async () => {
      const port = await freePort();
      const first = await startServe(dataDir, port);
      expect(first.output()).toMatch(/started embedded Postgres/);
      expect(first.output()).toMatch(/postgres:\/\/sigsync_app:\*\*\*\*@/);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const pid = Number(fs.readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);

      // A second process with the same DATA_DIR joins the running cluster.
      const created = await runCli(['workspace', 'create', '--name', 'Initech'], { DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      expect(created.code).toBe(0);
      expect(created.stderr).toMatch(/connected to the running embedded Postgres/);
      const key = /api key\s+(sgs_\S+)/.exec(created.stdout)![1]!;
      const me = await fetch(`http://127.0.0.1:${port}/v1/workspace`, { headers: { authorization: `Bearer ${key}` } });
      expect(me.status).toBe(200);
      expect(alive(pid)).toBe(true);

      const { code, ms } = await stop(first);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(15_000);
      expect(alive(pid)).toBe(false);

      // Restart: the same data is there.
      const second = await startServe(dataDir, port);
      const again = await fetch(`http://127.0.0.1:${port}/v1/workspace`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await again.json()) as { data: { name: string } }).data.name).toBe('Initech');
      expect((await stop(second)).code).toBe(0);
    },
    HEAVY_TEST_MS,
  );

  it(
    'exits 2 with one line naming PORT when the port is taken, and leaves no postgres behind',
    async () => {
      const blocker = net.createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      const port = (blocker.address() as net.AddressInfo).port;
      try {
        const r = await runCli(['serve'], { DATA_DIR: dataDir, PORT: String(port), SANDBOX: '0', LOG_LEVEL: 'warn' });
        expect(r.code).toBe(2);
        expect(r.stderr.trim().split('\n').at(-1)).toBe(
          `PORT: invalid value; expected a port nothing else listens on (127.0.0.1:${port} is in use; 0 picks a free one)`,
        );
        // The cluster this process started is stopped on the way out.
        const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
        await waitFor(async () => !fs.existsSync(pidFile) || !alive(Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0])), DEADLINE_MS, 100);
      } finally {
        blocker.close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    'a taken port with a fresh DATA_DIR: one line naming PORT, before any database is built',
    async () => {
      const blocker = net.createServer();
      await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
      const port = (blocker.address() as net.AddressInfo).port;
      const fresh = path.join(dataDir, 'another');
      try {
        const r = await runCli(['serve'], { DATA_DIR: fresh, PORT: String(port), LOG_LEVEL: 'info' });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr.trim().split('\n'), r.stderr).toEqual([
          `PORT: invalid value; expected a port nothing else listens on (127.0.0.1:${port} is in use; 0 picks a free one)`,
        ]);
        expect(r.stdout).not.toMatch(/initialising embedded Postgres/);
        expect(fs.existsSync(path.join(fresh, 'postgres'))).toBe(false);
        expect(fs.existsSync(path.join(fresh, 'server.lock'))).toBe(false);
      } finally {
        blocker.close();
      }
    },
    HEAVY_TEST_MS,
  );
});
