/**
 * The installs a sync queues for the teammates its pages create or change: one fan-out job per
 * page where the workspace has an integration that installs signatures, none where it has none
 * (the job would find no one to install). A mailbox integration connected while a page writes is
 * either seen by the page, or stored only after the page commits (the installers lock,
 * src/integrations/integrations.ts): the page's people are never left out of both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { holdInstallers } from '../../src/integrations/integrations.ts';
import { hasInstallers } from '../../src/integrations/queries.ts';
import { withTx } from '../../src/db/tx.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle, queuedFanoutTeammates, workspaceWithKey } from '../helpers/fixtures.ts';

describe('the installs a sync queues', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(30));
  });
  afterAll(() => google.close());

  const teammateIds = async (workspaceId: string) =>
    (await t.ctx.pool.query<{ id: string }>('select id from teammates where workspace_id = $1 order by id', [workspaceId])).rows.map((r) => r.id);
  const sync = async (workspaceId: string, integrationId: string) => {
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integrationId], { trigger: 'cli' });
    return executeRun(t.ctx, run!.id);
  };
  /** Whether a session waits for an advisory lock. */
  const advisoryWaiter = async () =>
    (await t.ctx.pool.query<{ n: number }>(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0]!.n > 0;

  it('queues no fan-out where the workspace has no integration that installs signatures', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    expect(await sync(workspaceId, directory.id)).toMatchObject({ status: 'succeeded', created: 30 });
    expect(await queuedFanoutTeammates(t.ctx, workspaceId)).toEqual([]);
  });

  it('queues the fan-out of every created teammate where a mailbox integration exists', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    expect(await sync(workspaceId, directory.id)).toMatchObject({ status: 'succeeded', created: 30 });
    expect((await queuedFanoutTeammates(t.ctx, workspaceId)).sort()).toEqual(await teammateIds(workspaceId));
  });

  it('a page waits for a mailbox integration being connected, then sees it and queues the fan-out', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    const connecting = await t.ctx.pool.connect();
    try {
      await connecting.query('begin');
      // The connection takes the installers lock first, as insertIntegration does.
      const { insertIntegration } = await import('../../src/integrations/integrations.ts');
      await insertIntegration(t.ctx, connecting, {
        workspaceId,
        kind: 'google_workspace',
        category: 'signatures',
        name: 'Gmail',
        credentials: {},
        config: { base_url: `${google.url}/`, token_url: `${google.url}/token` },
      });
      const run = sync(workspaceId, directory.id);
      run.catch(() => {});
      await waitFor(advisoryWaiter);
      await connecting.query('commit');
      expect(await run).toMatchObject({ status: 'succeeded', created: 30 });
    } finally {
      connecting.release();
    }
    expect((await queuedFanoutTeammates(t.ctx, workspaceId)).sort()).toEqual(await teammateIds(workspaceId));
  });

  it('a mailbox integration connected while a page holds the installers lock is stored after the page commits', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const page = await t.ctx.pool.connect();
    try {
      await page.query('begin');
      await holdInstallers(page, workspaceId);
      expect(await hasInstallers(page, workspaceId)).toBe(false);
      let stored = false;
      const connect = connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' }).then(() => (stored = true));
      connect.catch(() => {});
      await waitFor(advisoryWaiter);
      expect(stored).toBe(false);
      expect(await withTx(t.ctx.pool, (c) => hasInstallers(c, workspaceId))).toBe(false);
      await page.query('commit');
      await connect;
    } finally {
      page.release();
    }
    expect(await hasInstallers(t.ctx.pool, workspaceId)).toBe(true);
  });
});
