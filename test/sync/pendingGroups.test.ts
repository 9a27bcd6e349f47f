/**
 * The users listing does not wait for the Google members listing where it need not: with every
 * members.list call held, the pages of an unchanged directory are all written (recorded as seen);
 * when the members answer, the run compares those users' groups and writes the ones that changed:
 * a member moved to another group is moved, and only that teammate's installs are asked for. New
 * or changed people wait for their groups, so they are written once, with them, unless the members
 * take longer than the run's wait (MEMBERS_WAIT_MS): then they are written without them, and their
 * groups and installs follow. Members that answer while the listing goes on have the users listed
 * before them compared beside the listing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import type { RetryPolicy } from '../../src/sync/retry.ts';
import { useTestContext } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle, eventCount, queuedFanoutTeammates, workspaceWithKey } from '../helpers/fixtures.ts';
import { membersPerGroup } from '../helpers/fixtures/teammates.ts';

const FAST: RetryPolicy = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
const USERS = 1200; // three users pages
const BEFORE_LAST = 1000; // the users of the two pages before the last

describe('groups written beside and after the users listing', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(USERS));
  });
  afterAll(() => google.close());

  /** Members per group (external id) as stored for the integration, and as the directory has them. */
  const groupSizes = (integrationId: string) => membersPerGroup(t.ctx.pool, integrationId, 'group');
  const directoryGroups = () => Object.fromEntries(google.tenant.groups.map((g) => [g.id, g.members.length]));
  /** Moves the first member of the directory's first group to its second; answers the member's teammate. */
  const moveOneMember = async (integrationId: string) => {
    const [from, to] = google.tenant.groups;
    const moved = from!.members.shift()!;
    to!.members.push(moved);
    return (
      await t.ctx.pool.query<{ teammate_id: string }>('select teammate_id from teammate_sources where integration_id = $1 and external_id = $2', [
        integrationId,
        moved,
      ])
    ).rows[0]!.teammate_id;
  };

  it('writes an unchanged directory while the members listing is held, then its groups; a moved member is moved, with one install request', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    // Gmail is connected: the installs asked for go somewhere (a workspace without it queues none).
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const count = async (sql: string) => (await t.ctx.pool.query<{ n: number }>(sql, [integration.id])).rows[0]!.n;
    const teammates = () => count('select count(*)::int as n from teammate_sources where integration_id = $1');
    const membershipsOf = () => groupSizes(integration.id);
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
    expect(await membershipsOf()).toEqual(directoryGroups());
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(USERS);
    // The org units the pages wrote; the groups written after the listing leave them as they are.
    const orgUnits = await membersPerGroup(t.ctx.pool, integration.id, 'org_unit');
    expect(Object.values(orgUnits).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(USERS);
    await t.ctx.pool.query(`delete from graphile_worker._private_jobs`);

    // The same directory with the members listing held: every page is written before a single
    // members call is answered; then nothing changes and no install is asked for.
    const second = await sync(true, async () =>
      expect(
        await count(
          `select count(*)::int as n from sync_run_seen s join sync_runs r on r.id = s.run_id where r.integration_id = $1 and r.status = 'running' and s.groups_pending`,
        ),
      ).toBe(USERS),
    );
    expect(second).toMatchObject({ status: 'succeeded', created: 0, updated: 0, unchanged: USERS });
    expect(await membershipsOf()).toEqual(directoryGroups());
    expect(await fanouts()).toEqual([]);

    // One member moves from the first group to the second, listed the same way.
    const movedTeammate = await moveOneMember(integration.id);
    const third = await sync(true);
    expect(third).toMatchObject({ status: 'succeeded', created: 0 });
    expect(await membershipsOf()).toEqual(directoryGroups());
    expect(await fanouts()).toEqual([movedTeammate]);
    expect(await membersPerGroup(t.ctx.pool, integration.id, 'org_unit')).toEqual(orgUnits);
  });

  it('writes new people without their groups when the members take longer than the run waits, but for the last page; their groups and installs follow, once each', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    // Gmail is connected: a page that wrote its people with their groups would ask for their installs.
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    // One person of the first page in no group: their memberships do not change once the groups
    // are written, and they are installed all the same.
    const loner = google.tenant.users[10]!.id;
    for (const g of google.tenant.groups) if (g.members.includes(loner)) g.members.splice(g.members.indexOf(loner), 1);
    const sources = async () =>
      (
        await t.ctx.pool.query<{ n: number; without: number }>(
          `select count(*)::int as n, count(*) filter (where fingerprint like '%.')::int as without from teammate_sources where integration_id = $1`,
          [integration.id],
        )
      ).rows[0]!;
    google.knobs.hold = { route: 'members.list', after: google.counters.byRoute['members.list'] ?? 0 };
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    const done = executeRun(t.ctx, run!.id, { retry: FAST });
    done.catch(() => {});
    try {
      // The pages before the last are written while the members listing is held: each person
      // without groups, with their org units, pending, and no install asked for yet. The last page
      // waits for its groups.
      await waitFor(async () => (await sources()).n === BEFORE_LAST);
      expect(await sources()).toEqual({ n: BEFORE_LAST, without: BEFORE_LAST });
      expect(await groupSizes(integration.id)).toEqual({});
      expect(Object.values(await membersPerGroup(t.ctx.pool, integration.id, 'org_unit')).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(BEFORE_LAST);
      expect(await queuedFanoutTeammates(t.ctx, workspaceId)).toEqual([]);
      expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(BEFORE_LAST);
    } finally {
      google.knobs.hold = null;
    }
    expect(await done).toMatchObject({ status: 'succeeded', created: USERS, seen: USERS });
    expect(await groupSizes(integration.id)).toEqual(directoryGroups());
    expect(await sources()).toEqual({ n: USERS, without: 0 });
    const installs = await queuedFanoutTeammates(t.ctx, workspaceId);
    const teammates = await t.ctx.pool.query<{ id: string }>('select teammate_id as id from teammate_sources where integration_id = $1', [integration.id]);
    expect(installs.toSorted()).toEqual(teammates.rows.map((r) => r.id).toSorted());
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(USERS);
  });

  it('compares the users listed before the members answered beside the rest of the listing, not after it', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    // Gmail is connected: the installs asked for go somewhere (a workspace without it queues none).
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const [first] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    expect(await executeRun(t.ctx, first!.id, { retry: FAST })).toMatchObject({ status: 'succeeded', created: USERS });
    await t.ctx.pool.query(`delete from graphile_worker._private_jobs`);
    const movedTeammate = await moveOneMember(integration.id);

    // Two users pages are listed while the members listing is held, and the third page is held
    // (the emulator counts a route's calls since it started).
    const calls = (route: string) => google.counters.byRoute[route] ?? 0;
    const thirdPage = { route: 'users.list', after: calls('users.list') + 2 };
    google.knobs.hold = [{ route: 'members.list', after: calls('members.list') }, thirdPage];
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    const done = executeRun(t.ctx, run!.id, { retry: FAST });
    done.catch(() => {});
    const state = async () =>
      (
        await t.ctx.pool.query<{ status: string; pages: number; pending: number }>(
          `select r.status, r.pages, (select count(*)::int from sync_run_seen s where s.run_id = r.id and s.groups_pending) as pending from sync_runs r where r.id = $1`,
          [run!.id],
        )
      ).rows[0]!;
    try {
      await waitFor(async () => (await state()).pages === 2);
      expect(await state()).toMatchObject({ status: 'running', pending: 1000 });
      // The members answer; the listing is still held at its third page when the 1,000 users
      // listed before them have been compared and written.
      google.knobs.hold = [thirdPage];
      await waitFor(async () => (await state()).pending === 0);
      expect(await state()).toMatchObject({ status: 'running', pages: 2 });
      expect(google.counters.held).toBe(1);
    } finally {
      google.knobs.hold = null;
    }
    expect(await done).toMatchObject({ status: 'succeeded', created: 0, unchanged: USERS });
    expect(await state()).toMatchObject({ pending: 0 });
    expect(await groupSizes(integration.id)).toEqual(directoryGroups());
    expect(await queuedFanoutTeammates(t.ctx, workspaceId)).toEqual([movedTeammate]);
  });
});
