/**
 * R1 crash: a worker process killed with SIGKILL in the middle of a large directory sync and in the
 * middle of a fan-out. A new worker process releases the dead one's locked jobs at start (not after
 * graphile-worker's 4-hour lock timeout), the sync resumes from its checkpoint to the exact count,
 * and every mailbox gets installed with no more provider writes than mailboxes plus jobs in flight.
 *
 * The emulator holds the provider at a known point (the `hold` knob: the users page after the
 * third, the signature write after the quarter), the kill happens there, and the hold is lifted:
 * the same state on an idle or a busy machine.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { generateGoogleTenant, startGoogleEmulator } from '../../emulators/google.ts';
import { connectGoogle, eventCount, publishAndInstall, workspaceWithKey } from '../helpers/fixtures.ts';
import type { AppContext } from '../../src/context.ts';
import {
  connectGoogleAndGmail,
  count,
  drained,
  HEAVY_TEST_MS,
  installedCount,
  killWorker,
  primaryWrites,
  signatureForEveryone,
  startWorkerProcess,
  syncByWorkerProcess,
  useWorkerDatabase,
  waitFor,
} from './support.ts';

const SYNC_USERS = Number(process.env.R1_SYNC_USERS ?? 10_000);
const MAILBOXES = Number(process.env.R1_MAILBOXES ?? 400);
/** Users per page of the Google connector. */
const PAGE = 500;

describe('R1 crash recovery', () => {
  const db = useWorkerDatabase();
  const workers = db.workers;
  let ctx: AppContext;
  let url: string;
  beforeAll(() => ({ ctx, url } = db));

  it(
    `a SIGKILL in the middle of a ${SYNC_USERS}-user sync: the restarted worker completes it with the exact count`,
    async () => {
      const google = await startGoogleEmulator(generateGoogleTenant(SYNC_USERS, 'big.test'));
      db.closers.push(() => google.close());
      // The provider stops answering after a third of the pages: the run writes those, asks for the
      // next one, and is killed there.
      const writtenPages = Math.floor(SYNC_USERS / PAGE / 3);
      google.knobs.hold = { route: 'users.list', after: writtenPages };
      const { workspaceId } = await workspaceWithKey(ctx, 'Big');
      const directory = await connectGoogle(ctx, workspaceId, google.url);
      const [run] = await startRuns(ctx.pool, workspaceId, [directory.id], { trigger: 'api' });

      const first = await startWorkerProcess(url);
      workers.push(first);
      const runRow = async () =>
        (await ctx.pool.query<{ status: string; seen: number; pages: number }>('select status, seen, pages from sync_runs where id = $1', [run!.id])).rows[0]!;
      await waitFor(async () => (await runRow()).pages === writtenPages && google.counters.held > 0);
      const exit = await killWorker(first);
      expect(exit.signal).toBe('SIGKILL');
      google.knobs.hold = null;
      const atKill = await runRow();
      expect(atKill).toMatchObject({ status: 'running', pages: writtenPages, seen: writtenPages * PAGE });
      const locked = await count(
        ctx,
        `select count(*)::int as n from graphile_worker.jobs where locked_by is not null and task_identifier = 'sync_integration'`,
      );
      expect(locked).toBe(1);

      const t0 = Date.now();
      const second = await startWorkerProcess(url);
      workers.push(second);
      await waitFor(async () => (await runRow()).status !== 'running');
      const resumedMs = Date.now() - t0;
      expect(second.output()).toMatch(/released the jobs of worker processes that no longer run/);
      const final = (await ctx.pool.query('select status, seen, created, deleted from sync_runs where id = $1', [run!.id])).rows[0];
      const teammates = await count(ctx, 'select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId]);
      const created = await eventCount(ctx, workspaceId, 'teammate.created');
      const deleted = await eventCount(ctx, workspaceId, 'teammate.deleted');
      console.log(
        `R1 sync crash (${SYNC_USERS} users, SIGKILL at ${atKill.seen} seen / page ${atKill.pages}): teammates expected ${SYNC_USERS} observed ${teammates}; ` +
          `teammate.created expected ${SYNC_USERS} observed ${created}; teammate.deleted expected 0 observed ${deleted}; run ${final.status}, completed ${resumedMs} ms after restart`,
      );
      expect(final).toMatchObject({ status: 'succeeded', deleted: 0 });
      expect(teammates).toBe(SYNC_USERS);
      expect(created).toBe(SYNC_USERS);
      expect(deleted).toBe(0);
      await killWorker(second, 'SIGTERM');
    },
    HEAVY_TEST_MS,
  );

  it(
    `a SIGKILL in the middle of a ${MAILBOXES}-mailbox fan-out: every mailbox installed, writes ≤ mailboxes + in flight`,
    async () => {
      const google = await startGoogleEmulator(generateGoogleTenant(MAILBOXES, 'fan.test'));
      db.closers.push(() => google.close());
      const { workspaceId } = await workspaceWithKey(ctx, 'Fan');
      const { directory, titleField } = await connectGoogleAndGmail(ctx, workspaceId, google.url);
      await syncByWorkerProcess(db, workspaceId, directory.id);
      const signatureId = await signatureForEveryone(ctx, workspaceId, titleField);

      // Gmail stops answering signature writes after a quarter of the mailboxes: the installs
      // running then wait there, and the worker is killed with them in flight.
      google.knobs.hold = { route: 'sendAs.patch', after: MAILBOXES / 4 };
      await publishAndInstall(ctx, workspaceId, signatureId);
      const installed = () => installedCount(ctx, signatureId);
      const first = await startWorkerProcess(url);
      workers.push(first);
      await waitFor(async () => google.counters.held > 0);
      const inFlight = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where locked_by is not null`);
      await killWorker(first);
      const installedAtKill = await installed();
      expect(installedAtKill).toBeLessThan(MAILBOXES);
      expect(inFlight).toBeGreaterThan(0);
      // The provider goes on with the writes the dead worker had sent, as a real one would.
      google.knobs.hold = null;

      const second = await startWorkerProcess(url);
      workers.push(second);
      await waitFor(async () => (await installed()) === MAILBOXES);
      await drained(ctx);
      const { addresses: primaries, writes } = primaryWrites(google);
      const notInstalled = await count(ctx, `select count(*)::int as n from installations where signature_id = $1 and status <> 'installed'`, [signatureId]);
      console.log(
        `R1 fan-out crash (${MAILBOXES} mailboxes, SIGKILL at ${installedAtKill} installed, ${inFlight} jobs in flight): installed expected ${MAILBOXES} observed ${await installed()}; ` +
          `mailboxes written ${primaries.length}; provider writes ${writes} ≤ ${MAILBOXES + inFlight} (mailboxes + in flight)`,
      );
      expect(primaries).toHaveLength(MAILBOXES);
      expect(notInstalled).toBe(0);
      expect(writes).toBeLessThanOrEqual(MAILBOXES + inFlight);
      await killWorker(second, 'SIGTERM');
    },
    HEAVY_TEST_MS,
  );
});
