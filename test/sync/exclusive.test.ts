/**
 * One execution of a run writes at a time. Two executions of the same run started at once (a job
 * retried while its first attempt is alive, a manual call beside the job) must never both write:
 * each directory user becomes one teammate with one teammate.created.
 *
 * The emulator holds the users listing until both executions wait in it (one users.list each),
 * then answers: both executions have page 1 in hand and write it at the same time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { getRun, startRuns } from '../../src/integrations/syncRuns.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, eventCount, workspaceWithKey } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/cli.ts';
import type { RetryPolicy } from '../../src/sync/retry.ts';

const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
const USERS = 1000; // two users pages of 500

describe('exclusive execution of a sync run', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(USERS));
  });
  afterAll(() => google.close());

  it('two executions of one run started at once write each person once', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    google.knobs.hold = { route: 'users.list', after: 0 };

    const first = executeRun(t.ctx, run!.id, { retry: FAST });
    const second = executeRun(t.ctx, run!.id, { retry: FAST });
    await waitFor(async () => google.counters.held >= 2);
    google.knobs.hold = null;
    const results = await Promise.all([first, second]);

    const final = await getRun(t.ctx.pool, run!.id);
    console.log(`expected ${USERS} teammates, ${USERS} teammate.created; run ${final?.status}, pages ${final?.pages}, created ${final?.created}`);
    expect(results.map((r) => r?.id)).toEqual([run!.id, run!.id]);
    expect(final).toMatchObject({ status: 'succeeded', pages: 2, created: USERS, seen: USERS });
    const people = await t.ctx.pool.query<{ n: number; names: number; sources: number }>(
      `select count(*)::int as n, count(distinct display_name)::int as names,
              (select count(*)::int from teammate_sources where integration_id = $2) as sources
         from teammates where workspace_id = $1`,
      [workspaceId, integration.id],
    );
    expect(people.rows[0]).toEqual({ n: USERS, names: USERS, sources: USERS });
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(USERS);
  });
});
