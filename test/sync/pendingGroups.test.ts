/**
 * The users listing does not wait for the Google members listing where it need not: with every
 * members.list call held, the pages of an unchanged directory are all written (recorded as seen);
 * when the members answer, the run compares those users' groups and writes the ones that changed:
 * a member moved to another group is moved, and only that teammate's installs are asked for. New
 * or changed people wait for their groups, so they are written once, with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/sync/runs.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../src/sandbox/google.ts';
import type { RetryPolicy } from '../../src/sync/retry.ts';
import { useTestContext } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle, eventCount, queuedFanoutTeammates, workspaceWithKey } from '../helpers/fixtures.ts';

const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
const USERS = 1200; // three users pages

describe('groups written after the users listing', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(USERS));
  });
  afterAll(() => google.close());

  it('writes an unchanged directory while the members listing is held, then its groups; a moved member is moved, with one install request', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    const count = async (sql: string) => (await t.ctx.pool.query<{ n: number }>(sql, [integration.id])).rows[0]!.n;
    const teammates = () => count('select count(*)::int as n from teammate_sources where integration_id = $1');
    const membershipsOf = async (kind: 'group' | 'org_unit') =>
      Object.fromEntries(
        (
          await t.ctx.pool.query<{ external_id: string; n: number }>(
            `select g.external_id, count(*)::int as n from memberships m join groups g on g.id = m.group_id
              where g.integration_id = $1 and g.kind = $2 group by g.external_id`,
            [integration.id, kind],
          )
        ).rows.map((r) => [r.external_id, r.n]),
      );
    const directoryGroups = () => Object.fromEntries(google.tenant.groups.map((g) => [g.id, g.members.length]));
    const fanouts = () => queuedFanoutTeammates(t.ctx, workspaceId);
    const sync = async (held: boolean, whileHeld?: () => Promise<void>) => {
      google.knobs.hold = held ? { route: 'members.list', after: 0 } : null;
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
      const done = executeRun(t.ctx, run!.id, { retry: FAST });
      done.catch(() => {});
      try {
        if (held) {
          await waitFor(async () => (await t.ctx.pool.query<{ pages: number }>('select pages from sync_runs where id = $1', [run!.id])).rows[0]!.pages === 3);
          expect(google.counters.held).toBeGreaterThan(0);
          await whileHeld?.();
        }
      } finally {
        google.knobs.hold = null;
      }
      return done;
    };

    // First run: new people wait for their groups.
    const first = await sync(false);
    expect(first).toMatchObject({ status: 'succeeded', created: USERS, seen: USERS });
    expect(await teammates()).toBe(USERS);
    expect(await membershipsOf('group')).toEqual(directoryGroups());
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(USERS);
    await t.ctx.pool.query(`delete from graphile_worker._private_jobs`);

    // The same directory with the members listing held: every page is written before a single
    // members call is answered; then nothing changes and no install is asked for.
    const second = await sync(true, async () => expect(await count(`select count(*)::int as n from sync_run_seen s join sync_runs r on r.id = s.run_id where r.integration_id = $1 and r.status = 'running' and s.groups_pending`)).toBe(USERS));
    expect(second).toMatchObject({ status: 'succeeded', created: 0, updated: 0, unchanged: USERS });
    expect(await membershipsOf('group')).toEqual(directoryGroups());
    expect(await fanouts()).toEqual([]);

    // One member moves from the first group to the second, listed the same way.
    const [from, to] = google.tenant.groups;
    const moved = from!.members.shift()!;
    to!.members.push(moved);
    const third = await sync(true);
    expect(third).toMatchObject({ status: 'succeeded', created: 0 });
    expect(await membershipsOf('group')).toEqual(directoryGroups());
    const movedTeammate = (await t.ctx.pool.query<{ teammate_id: string }>('select teammate_id from teammate_sources where integration_id = $1 and external_id = $2', [integration.id, moved])).rows[0]!.teammate_id;
    expect(await fanouts()).toEqual([movedTeammate]);
  });
});
