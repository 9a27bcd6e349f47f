/**
 * A lone worker's probes on HOST:WORKER_METRICS_PORT (docs/production.md, "What to monitor"):
 * /healthz answers while the process is up; /readyz answers ready only while the database answers
 * and the worker runs, and says which is missing. A taken WORKER_METRICS_PORT is refused before
 * the database is opened.
 */
import net from 'node:net';
import pg from 'pg';
import { inject } from 'vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, testConfig } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { createLogger } from '../../src/log.ts';
import { startApp } from '../../src/app.ts';

async function probe(url: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url);
  return { status: r.status, body: await r.json() };
}

/** Runs `sql` as the cluster's superuser. */
async function asAdmin(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

describe("a lone worker's /healthz and /readyz", async () => {
  const db = await createDatabase();
  afterAll(async () => {
    await asAdmin(`alter database ${db.name} with allow_connections true`);
    await db.drop();
  });

  it('healthz while up; readyz ready, then 503 naming the database while it refuses connections, ready again, and 503 once the worker stopped', async () => {
    const app = await startApp(testConfig({ DATABASE_URL: db.url, WORKER_METRICS_PORT: '0' }), createLogger('silent'), { worker: { noCron: true } });
    const base = app.metricsUrl!.replace(/\/metrics$/, '');
    try {
      expect(await probe(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
      expect(await probe(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } });

      await asAdmin(`alter database ${db.name} with allow_connections false`);
      await asAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${db.name}'`);
      const down = await waitFor(async () => {
        const r = await probe(`${base}/readyz`);
        return r.status === 503 ? r : undefined;
      });
      expect(down.body).toMatchObject({ status: 'not_ready', reason: expect.stringMatching(/^database unreachable: /) });
      expect(await probe(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });

      await asAdmin(`alter database ${db.name} with allow_connections true`);
      await waitFor(async () => (await probe(`${base}/readyz`)).status === 200);

      await app.runner!.stop();
      await waitFor(async () => (await probe(`${base}/readyz`)).status === 503);
      expect(await probe(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'not_ready', reason: 'worker stopped' } });
      expect(await probe(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    } finally {
      await app.stop();
    }
  });

  it('a WORKER_METRICS_PORT in use is one line naming it, before the database is opened', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      // A database URL nothing answers at: the port is refused first.
      const config = testConfig({ DATABASE_URL: 'postgres://nobody:x@127.0.0.1:1/none', WORKER_METRICS_PORT: String(port) });
      await expect(startApp(config, createLogger('silent'), { worker: true })).rejects.toThrow(
        `WORKER_METRICS_PORT: invalid value; expected a port nothing else listens on (127.0.0.1:${port} is in use)`,
      );
    } finally {
      blocker.close();
    }
  });
});
