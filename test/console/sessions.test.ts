/**
 * The daily prune task deletes the console's sessions that expired or were signed out and the
 * sign-in links that were used or expired; live ones keep working.
 */
import { describe, expect, it } from 'vitest';
import { createSignInLink, endSession, findSession, openSession, redeemSignInLink } from '../../src/console/sessions.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { waitFor } from '../helpers/cli.ts';
import { useTestContext } from '../helpers/db.ts';

describe('console sessions: prune', () => {
  const t = useTestContext();

  it('the prune job deletes expired and ended sessions and used or expired links, and keeps the live ones', async () => {
    const { pool } = t.ctx;
    const ws = (await createWorkspace(pool, 'Acme')).id;
    const liveLink = await createSignInLink(pool, ws, 'test');
    await createSignInLink(pool, ws, 'test', -1000);
    const usedLink = await createSignInLink(pool, ws, 'test');
    const fromUsedLink = (await redeemSignInLink(pool, usedLink.token))!;
    const live = await openSession(pool, ws, 'link', 'test');
    await openSession(pool, ws, 'link', 'test', -1000);
    const ended = await openSession(pool, ws, 'link', 'test');
    await endSession(pool, ended);
    const count = async () =>
      (
        await pool.query<{ sessions: number; links: number }>(
          'select (select count(*)::int from console_sessions) as sessions, (select count(*)::int from console_sign_in_links) as links',
        )
      ).rows[0]!;
    expect(await count()).toEqual({ sessions: 4, links: 3 });

    const runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 1 });
    try {
      await t.ctx.jobs.addJob('prune', {});
      await waitFor(async () => (await t.ctx.metrics.jobs.get()).values.some((v) => v.labels.task === 'prune' && v.labels.outcome === 'succeeded'));
    } finally {
      await runner.stop();
    }
    expect(await count()).toEqual({ sessions: 2, links: 1 });
    const { rows } = await pool.query<{ id: string }>('select id from console_sessions order by id');
    expect(rows.map((r) => r.id).sort()).toEqual([live.id, fromUsedLink.id].sort());
    expect((await findSession(pool, live.token))?.id).toBe(live.id);
    expect((await redeemSignInLink(pool, liveLink.token))?.workspaceId).toBe(ws);
  });
});
