/**
 * R6 shutdown: SIGTERM to a `sigsync worker` process in the middle of a fan-out. The process stops
 * taking jobs, lets the running installs finish (or releases them), unregisters, and exits 0 within
 * the grace period; no job is left locked by it. A new worker then installs every remaining
 * mailbox, with no more provider writes than mailboxes plus the installs in flight at the signal.
 *
 * Gmail holds its signature writes after a quarter of the mailboxes (the emulator's `hold` knob),
 * so the installs running at the signal are still running when the worker receives it; the hold
 * is lifted once the worker says it is shutting down, and those installs finish during the
 * shutdown. The same sequence on an idle or a busy machine.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SHUTDOWN_GRACE_MS } from '../../src/cli/commands/server.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import type { AppContext } from '../../src/context.ts';
import { publishAndInstall, workspaceWithKey } from '../helpers/fixtures.ts';
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

const MAILBOXES = Number(process.env.R6_MAILBOXES ?? 400);

describe('R6 graceful shutdown', () => {
  const db = useWorkerDatabase();
  const workers = db.workers;
  let ctx: AppContext;
  let url: string;
  let google: GoogleEmulator;
  beforeAll(() => ({ ctx, url } = db));

  it(
    `a SIGTERM in the middle of a ${MAILBOXES}-mailbox fan-out: exit 0 within the grace period, no job left locked, nothing lost`,
    async () => {
      google = await startGoogleEmulator(generateGoogleTenant(MAILBOXES, 'term.test'));
      db.closers.push(() => google.close());
      const { workspaceId } = await workspaceWithKey(ctx, 'Term');
      const { directory, titleField } = await connectGoogleAndGmail(ctx, workspaceId, google.url);
      // An idle worker stops cleanly too.
      const idleExit = await syncByWorkerProcess(db, workspaceId, directory.id);
      expect(idleExit).toEqual({ code: 0, signal: null });
      const signatureId = await signatureForEveryone(ctx, workspaceId, titleField);

      google.knobs.hold = { route: 'sendAs.patch', after: MAILBOXES / 4 };
      await publishAndInstall(ctx, workspaceId, signatureId);
      const installed = () => installedCount(ctx, signatureId);
      const first = await startWorkerProcess(url);
      workers.push(first);
      await waitFor(async () => google.counters.held > 0);

      const inFlight = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where locked_by is not null`);
      const installedAtSignal = await installed();
      const t0 = Date.now();
      first.child.kill('SIGTERM');
      // The worker has stopped taking jobs; the installs it is running may now finish.
      await waitFor(async () => first.output().includes('"msg":"shutting down"'));
      google.knobs.hold = null;
      const exit = await first.exited;
      const exitMs = Date.now() - t0;
      const installedAtExit = await installed();
      const lockedAfter = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where locked_by is not null or locked_at is not null`);
      const queuedAfter = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where task_identifier = 'install_mailbox'`);
      const registered = await count(ctx, 'select count(*)::int as n from worker_heartbeats');
      const slotsHeld = await count(ctx, 'select count(*)::int as n from install_slots');
      const output = first.output();

      const second = await startWorkerProcess(url);
      workers.push(second);
      await waitFor(async () => (await installed()) === MAILBOXES);
      await drained(ctx);
      const { addresses: primaries, writes } = primaryWrites(google);
      const notInstalled = await count(ctx, `select count(*)::int as n from installations where signature_id = $1 and status <> 'installed'`, [signatureId]);
      console.log(
        `R6 shutdown (${MAILBOXES} mailboxes, SIGTERM at ${installedAtSignal} installed with ${inFlight} jobs in flight, their Gmail writes held until the worker began shutting down): ` +
          `installs finished during the shutdown ${installedAtExit - installedAtSignal}; exit ${JSON.stringify(exit)} after ${exitMs} ms, grace ${SHUTDOWN_GRACE_MS} ms; jobs left locked expected 0 observed ${lockedAfter} (${queuedAfter} installs queued); ` +
          `worker registrations left expected 0 observed ${registered}; install slots held expected 0 observed ${slotsHeld}; ` +
          `after a new worker: installed expected ${MAILBOXES} observed ${await installed()}; mailboxes written ${primaries.length}; provider writes ${writes} ≤ ${MAILBOXES + inFlight} (mailboxes + in flight)`,
      );
      // Exit 0 also means within the grace period: past it, the process exits 1.
      expect(exit).toEqual({ code: 0, signal: null });
      expect(exitMs).toBeLessThan(SHUTDOWN_GRACE_MS);
      // One line from the signal on ("shutting down"); nothing at warn or error.
      expect(output.slice(output.indexOf('"msg":"shutting down"')).trim().split('\n')).toHaveLength(1);
      expect(installedAtExit).toBeGreaterThan(installedAtSignal);
      expect(installedAtExit).toBeLessThan(MAILBOXES);
      expect(queuedAfter).toBeGreaterThan(0);
      expect(lockedAfter).toBe(0);
      expect(registered).toBe(0);
      expect(slotsHeld).toBe(0);
      expect(primaries).toHaveLength(MAILBOXES);
      expect(notInstalled).toBe(0);
      expect(writes).toBeLessThanOrEqual(MAILBOXES + inFlight);
      await killWorker(second, 'SIGTERM');
    },
    HEAVY_TEST_MS,
  );
});
