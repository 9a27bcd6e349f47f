/**
 * R6 shutdown: SIGTERM to a `sigsync worker` process in the middle of a fan-out. The process stops
 * taking jobs, lets the running installs finish (or releases them), unregisters, and exits 0 within
 * the grace period; no job is left locked by it. A new worker then installs every remaining
 * mailbox, with no more provider writes than mailboxes plus the installs in flight at the signal.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRuns } from '../../src/sync/runs.ts';
import { SHUTDOWN_GRACE_MS } from '../../src/cli/commands/server.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../src/sandbox/google.ts';
import type { AppContext } from '../../src/context.ts';
import { connectGoogle, mapSmartField, workspaceWithKey } from '../helpers/fixtures.ts';
import { count, killWorker, useWorkerDatabase, publish, signatureForEveryone, startWorkerProcess, waitFor } from './support.ts';

const MAILBOXES = Number(process.env.R6_MAILBOXES ?? 1500);
/** Emulated Gmail latency during the fan-out, so that it lasts several seconds. */
const LATENCY_MS = Number(process.env.R6_LATENCY_MS ?? 10);
/** Gmail latency from the signal on: the installs running then take seconds to finish. */
const SLOW_MS = 1000;

describe('R6 graceful shutdown', () => {
  const db = useWorkerDatabase();
  const workers = db.workers;
  let ctx: AppContext;
  let url: string;
  let google: GoogleEmulator;
  beforeAll(() => ({ ctx, url } = db));

  it(`a SIGTERM in the middle of a ${MAILBOXES}-mailbox fan-out: exit 0 within the grace period, no job left locked, nothing lost`, async () => {
    google = await startGoogleEmulator(generateGoogleTenant(MAILBOXES, 'term.test'));
    db.closers.push(() => google.close());
    const { workspaceId } = await workspaceWithKey(ctx, 'Term');
    const directory = await connectGoogle(ctx, workspaceId, google.url);
    await connectGoogle(ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const title = await mapSmartField(ctx, workspaceId, 'job_title', directory.id, 'organizations.primary.title');
    await startRuns(ctx.pool, workspaceId, [directory.id], { trigger: 'api' });
    const warm = await startWorkerProcess(url);
    workers.push(warm);
    await waitFor(async () => (await count(ctx, `select count(*)::int as n from sync_runs where integration_id = $1 and status = 'succeeded'`, [directory.id])) === 1, 90_000, 50);
    await waitFor(async () => (await count(ctx, 'select count(*)::int as n from graphile_worker.jobs')) === 0, 60_000, 50);
    // An idle worker stops cleanly too.
    const idleExit = await killWorker(warm, 'SIGTERM');
    expect(idleExit).toEqual({ code: 0, signal: null });
    const signatureId = await signatureForEveryone(ctx, workspaceId, title);

    google.knobs.latencyMs = LATENCY_MS;
    await publish(ctx, workspaceId, signatureId);
    const installed = () => count(ctx, `select count(*)::int as n from installations where signature_id = $1 and status = 'installed'`, [signatureId]);
    const first = await startWorkerProcess(url);
    workers.push(first);
    await waitFor(async () => (await installed()) >= MAILBOXES / 4, 120_000, 10);

    // From now on each Gmail call takes a second: the installs running at the signal are still
    // running well after it, and the worker has to wait for them.
    google.knobs.latencyMs = SLOW_MS;
    const inFlight = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where locked_by is not null`);
    const installedAtSignal = await installed();
    const t0 = Date.now();
    first.child.kill('SIGTERM');
    const exit = await Promise.race([first.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), SHUTDOWN_GRACE_MS + 5_000))]);
    const exitMs = Date.now() - t0;
    const installedAtExit = await installed();
    const lockedAfter = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where locked_by is not null or locked_at is not null`);
    const queuedAfter = await count(ctx, `select count(*)::int as n from graphile_worker.jobs where task_identifier = 'install_mailbox'`);
    const registered = await count(ctx, 'select count(*)::int as n from worker_heartbeats');
    const slotsHeld = await count(ctx, 'select count(*)::int as n from install_slots');
    const output = first.output();

    google.knobs.latencyMs = 0;
    const second = await startWorkerProcess(url);
    workers.push(second);
    await waitFor(async () => (await installed()) === MAILBOXES, 120_000, 100);
    await waitFor(async () => (await count(ctx, 'select count(*)::int as n from graphile_worker.jobs')) === 0, 60_000, 100);
    const primaries = [...google.writes.entries()].filter(([a]) => a.startsWith('user'));
    const writes = primaries.reduce((a, [, n]) => a + n, 0);
    const notInstalled = await count(ctx, `select count(*)::int as n from installations where signature_id = $1 and status <> 'installed'`, [signatureId]);
    console.log(
      `R6 shutdown (${MAILBOXES} mailboxes, SIGTERM at ${installedAtSignal} installed with ${inFlight} jobs in flight, Gmail then answering in ${SLOW_MS} ms): ` +
        `installs finished during the shutdown ${installedAtExit - installedAtSignal}; exit ${JSON.stringify(exit === 'hung' ? 'hung' : exit)} after ${exitMs} ms, grace ${SHUTDOWN_GRACE_MS} ms; jobs left locked expected 0 observed ${lockedAfter} (${queuedAfter} installs queued); ` +
        `worker registrations left expected 0 observed ${registered}; install slots held expected 0 observed ${slotsHeld}; ` +
        `after a new worker: installed expected ${MAILBOXES} observed ${await installed()}; mailboxes written ${primaries.length}; provider writes ${writes} ≤ ${MAILBOXES + inFlight} (mailboxes + in flight)`,
    );
    expect(exit).toEqual({ code: 0, signal: null });
    expect(exitMs).toBeLessThan(SHUTDOWN_GRACE_MS);
    expect(output).toMatch(/"msg":"stopped"/);
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
  }, 240_000);
});
