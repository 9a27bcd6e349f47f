/**
 * How a run lists: it asks for its first users page beside the groups listing, which the page does
 * not depend on; and it asks for each next page as soon as a page arrives, one page ahead of the
 * pages it writes, not when the writing loop takes the page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';

describe('the listing of a run', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(2500)); // five users pages
  });
  afterAll(() => google.close());

  const start = async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    const done = executeRun(t.ctx, run!.id);
    done.catch(() => {});
    return { integration, run: run!, done };
  };
  const usersPages = () => google.counters.byRoute['users.list'] ?? 0;

  it('asks for the first users page while the groups are listed, and writes nothing before they are known', async () => {
    const before = usersPages();
    google.knobs.hold = { route: 'groups.list', after: 0 };
    const { integration, done } = await start();
    try {
      await waitFor(async () => google.counters.held > 0 && usersPages() > before);
      const written = await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from teammate_sources where integration_id = $1', [integration.id]);
      expect(written.rows[0]!.n).toBe(0);
    } finally {
      google.knobs.hold = null;
    }
    expect(await done).toMatchObject({ status: 'succeeded', created: 2500, seen: 2500 });
    expect(usersPages() - before).toBe(5);
  });

  it('asks for the next page when a page arrives, one ahead of the pages it writes', async () => {
    const before = usersPages();
    // The users pages wait at the provider until the run row is locked: every page write then
    // waits on it (the seen list's key to the run), and the loop stops taking pages after two.
    google.knobs.hold = { route: 'users.list', after: before };
    const { run, done } = await start();
    const locker = await t.ctx.pool.connect();
    try {
      await waitFor(async () => google.counters.held > 0);
      await locker.query('begin');
      await locker.query('select 1 from sync_runs where id = $1 for update', [run.id]);
      const lockerPid = (await locker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      // Pages 1 and 2 answered, the third held: it is asked for when the second arrives.
      google.knobs.hold = { route: 'users.list', after: before + 2 };
      await waitFor(async () => usersPages() - before >= 3 && google.counters.held > 0);
      // The loop took both pages: their transactions wait on the run row.
      await waitFor(
        async () =>
          (await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [lockerPid])).rows[0]!
            .n >= 2,
      );
      expect(usersPages() - before).toBe(3);
      // The third page arrives after the loop took it: the fourth is asked for at once, while
      // the loop still waits; a fifth would be held (and counted) here. Waits until the fourth is
      // answered and nothing but held requests is in flight.
      google.knobs.hold = { route: 'users.list', after: before + 4 };
      await waitFor(async () => usersPages() - before >= 4 && google.counters.inFlight === google.counters.held);
      expect(usersPages() - before).toBe(4);
      await locker.query('commit');
    } finally {
      google.knobs.hold = null;
      locker.release();
    }
    expect(await done).toMatchObject({ status: 'succeeded', created: 2500, seen: 2500 });
    expect(usersPages() - before).toBe(5);
  });
});
