import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startWorker } from '../../src/worker/runner.ts';
import { defineTask } from '../../src/tasks/define.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { useTestContext } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';

describe('worker', () => {
  const t = useTestContext();

  it('runs a registered job end to end (prune drops bookkeeping of finished runs)', async () => {
    const { pool } = t.ctx;
    const ws = (await createWorkspace(pool, 'W')).id;
    const integ = await insertIntegrationRow(pool, ws, { kind: 'google_workspace', category: 'teammates', name: 'G' });
    const old = (
      await pool.query(
        `insert into sync_runs (workspace_id, integration_id, status, trigger, started_at, finished_at)
         values ($1, $2, 'succeeded', 'cli', now() - interval '3 days', now() - interval '2 days') returning id`,
        [ws, integ],
      )
    ).rows[0].id;
    const running = (await pool.query(`insert into sync_runs (workspace_id, integration_id, trigger) values ($1, $2, 'cli') returning id`, [ws, integ])).rows[0]
      .id;
    await pool.query(`insert into sync_run_seen (run_id, external_id) values ($1, 'a'), ($1, 'b'), ($2, 'c')`, [old, running]);

    const runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 1 });
    try {
      await t.ctx.jobs.addJob('prune', {});
      await waitFor(async () => (await pool.query(`select 1 from sync_run_seen where run_id = $1`, [old])).rowCount === 0);
      // The running run keeps its bookkeeping.
      expect((await pool.query(`select 1 from sync_run_seen where run_id = $1`, [running])).rowCount).toBe(1);
      await waitFor(async () => (await t.ctx.metrics.jobs.get()).values.some((v) => v.labels.task === 'prune' && v.labels.outcome === 'succeeded'));
    } finally {
      await runner.stop();
    }
  });

  it('drops a job whose payload does not parse, and counts it', async () => {
    const seen: unknown[] = [];
    const strict = defineTask({ name: 'test_strict', payload: z.object({ n: z.number() }), run: async (p) => void seen.push(p) });
    const runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, tasks: [strict] });
    try {
      await t.ctx.jobs.addJob('test_strict', { n: 'nope' });
      await t.ctx.jobs.addJob('test_strict', { n: 1 });
      await waitFor(async () => seen.length === 1);
      await waitFor(async () => (await t.ctx.metrics.jobs.get()).values.some((v) => v.labels.task === 'test_strict' && v.labels.outcome === 'invalid_payload'));
      // Both jobs complete (the invalid one is dropped, not retried); a job row goes just after its task returns.
      await waitFor(
        async () => (await t.ctx.pool.query(`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'test_strict'`)).rows[0].n === 0,
      );
      expect(seen).toEqual([{ n: 1 }]);
    } finally {
      await runner.stop();
    }
  });

  it('shuts down gracefully: a running job finishes before stop() resolves', async () => {
    let finished = false;
    let started = false;
    const slow = defineTask({
      name: 'test_slow',
      payload: z.object({}),
      run: async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 700));
        finished = true;
      },
    });
    const runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, tasks: [slow] });
    await t.ctx.jobs.addJob('test_slow', {});
    await waitFor(async () => started);
    await runner.stop();
    expect(finished).toBe(true);
    // The completion is written as the worker releases; the job leaves the queue, not to run again.
    await waitFor(async () => (await t.ctx.pool.query(`select 1 from graphile_worker.jobs where task_identifier = 'test_slow'`)).rowCount === 0);
  });
});
