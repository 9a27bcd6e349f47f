/**
 * The database pool of a lone worker process: one connection per job it runs at once and one for
 * graphile-worker's LISTEN (src/db/openContext.ts), not the server's 20; fewer backends do the same
 * sync work with less Postgres CPU (docs/performance.md). A process that also serves the API keeps 20.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, testConfig } from '../helpers/db.ts';
import { createLogger } from '../../src/log.ts';
import { startApp } from '../../src/app.ts';
import { enqueue, jobs } from '../../src/jobs/catalogue.ts';
import { waitFor } from '../helpers/cli.ts';

describe('the database pool of a worker process', async () => {
  const db = await createDatabase();
  afterAll(() => db.drop());

  it('a lone worker holds WORKER_CONCURRENCY + 1 connections at most, and still runs its jobs', async () => {
    const app = await startApp(testConfig({ DATABASE_URL: db.url, WORKER_CONCURRENCY: '3' }), createLogger('silent'), { worker: { noCron: true } });
    try {
      expect(app.ctx.pool.options.max).toBe(4);
      // The nightly sync with no integration: its job runs and completes with the smaller pool.
      await enqueue(app.ctx.pool, jobs.syncAll, {});
      await waitFor(async () => (await app.ctx.pool.query<{ n: number }>(`select count(*)::int as n from graphile_worker.jobs`)).rows[0]!.n === 0, 30_000);
    } finally {
      await app.stop();
    }
  });

  it('a process that also serves the API keeps a pool of 20', async () => {
    const app = await startApp(testConfig({ DATABASE_URL: db.url, WORKER_CONCURRENCY: '3', PORT: '0' }), createLogger('silent'), {
      api: true,
      worker: { noCron: true },
    });
    try {
      expect(app.ctx.pool.options.max).toBe(20);
    } finally {
      await app.stop();
    }
  });
});
