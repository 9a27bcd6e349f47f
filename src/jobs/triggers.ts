/**
 * Every request for a job: the helpers that exist to add one, in the caller's transaction when given
 * its client (so a change and the work it asks for commit together). Callers decide whether and for
 * what (the owners read their tables); these add the jobs through the catalogue's `enqueue` and
 * `enqueueMany`, which nothing outside src/jobs/ calls (test/architecture/jobs.test.ts).
 *
 *   publish / variant publish        -> requestSignatureInstall(..., { forced: false })
 *   POST /v1/signatures/{id}/install -> requestSignatureInstall(..., { forced: true })
 *   campaign start / end / pause     -> requestSignatureInstall for each targeted signature
 *   directory sync changed people    -> requestTeammateInstalls
 *   integration reconnected          -> requestIntegrationInstalls
 *   a fan-out's recipients, a retry  -> requestInstalls: one install job per (address, kind, integration)
 *   sync runs started                -> requestSyncRuns
 *   a directory run succeeded        -> requestPhotoSync (the assets integrations), requestSeatSync (with billing)
 *   webhook deliveries created       -> requestDeliveries; a failed attempt's next -> requestDeliveryRetry
 */
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import { enqueue, enqueueMany, jobKey, jobs } from './catalogue.ts';

export interface SignatureInstallRequest {
  /** Which kinds to install; all by default. */
  kinds?: SignatureKind[];
  /** Install even where the rendered signature is unchanged. */
  forced: boolean;
}

export async function requestSignatureInstall(db: Queryable, workspaceId: string, signatureId: string, req: SignatureInstallRequest): Promise<void> {
  const kinds = req.kinds ?? ['primary', 'reply', 'internal'];
  // A burst of publishes of one signature coalesces into one fan-out of the latest state (its job key).
  await enqueue(db, jobs.fanoutSignature, { workspaceId, signatureId, kinds, forced: req.forced });
}

export async function requestTeammateInstalls(db: Queryable, workspaceId: string, teammateIds: string[]): Promise<void> {
  if (!teammateIds.length) return;
  await enqueue(db, jobs.fanoutTeammates, { workspaceId, teammateIds });
}

export async function requestIntegrationInstalls(db: Queryable, workspaceId: string, integrationId: string): Promise<void> {
  await enqueue(db, jobs.fanoutIntegration, { workspaceId, integrationId });
}

/** One mailbox slot to install: an address, a signature kind, the integration that installs it. */
export interface InstallRequest {
  emailId: string;
  kind: SignatureKind;
  integrationId: string;
}

const INSTALL_BATCH = 1000;

/**
 * One install job per (address, kind, integration), enqueued in bulk; answers how many targets were
 * given. The job key is the slot, so a burst of requests coalesces into one install of the latest state.
 *
 * Lock order. graphile-worker's `add_jobs` locks one jobs row per key: it clears the key of running
 * jobs (in the order of its join), then inserts or updates the pending ones (in the order of the
 * specs). Two fan-outs of one signature (a publish while the previous fan-out still runs gets a new
 * fan-out job) used to enqueue the same keys at once, in whatever order their recipients query
 * returned them and their joins visited them: each held rows the other waited for, and Postgres
 * ended one with 40P01 (deadlock detected), up to the job's last attempt. Now every enqueue of a
 * workspace's install jobs runs in a transaction that first takes that workspace's advisory lock,
 * and its keys are sorted: two enqueues never hold job rows at the same time, and the rows of one
 * are always taken in one order. Other writers of these rows (a worker taking or completing a job,
 * an install re-queueing its own key) touch one row at a time and cannot close a cycle with it.
 */
export async function requestInstalls(pool: pg.Pool, workspaceId: string, targets: readonly InstallRequest[], forced: boolean, runAt?: Date): Promise<number> {
  const payloads = targets.map((t) => ({ workspaceId, emailId: t.emailId, kind: t.kind, integrationId: t.integrationId, forced }));
  const items = [...new Map(payloads.map((p) => [jobKey(jobs.installMailbox, p)!, p])).entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, payload]) => (runAt ? { payload, runAt } : { payload }));
  for (let i = 0; i < items.length; i += INSTALL_BATCH) {
    await withTx(pool, async (c) => {
      await c.query(`select pg_advisory_xact_lock(hashtextextended('sigsync:install-jobs:' || $1, 0))`, [workspaceId]);
      // graphile-worker's bulk insert, inside this transaction.
      await enqueueMany(c, jobs.installMailbox, items.slice(i, i + INSTALL_BATCH));
    });
  }
  return targets.length;
}

/** One `sync_integration` job per started run, keyed by its integration (one at a time per integration), in one call. */
export async function requestSyncRuns(db: Queryable, runs: readonly { id: string; integration_id: string }[]): Promise<void> {
  await enqueueMany(
    db,
    jobs.syncIntegration,
    runs.map((r) => ({ payload: { runId: r.id }, keyBy: { integrationId: r.integration_id } })),
  );
}

/** A photo sync for each of these assets integrations of the workspace (the integrations owner picks them); answers how many. */
export async function requestPhotoSync(db: Queryable, workspaceId: string, integrationIds: readonly string[]): Promise<number> {
  for (const integrationId of integrationIds) await enqueue(db, jobs.syncPhotos, { workspaceId, integrationId });
  return integrationIds.length;
}

/** The seat sync after a directory run (the caller checks the workspace has billing); a burst coalesces per workspace. */
export async function requestSeatSync(db: Queryable, workspaceId: string, runId: string): Promise<void> {
  await enqueue(db, jobs.syncSeats, { workspaceId, runId });
}

/** One `deliver_webhook` job per delivery (keyed by the delivery), in one `add_jobs` call. */
export async function requestDeliveries(db: Queryable, deliveryIds: readonly string[]): Promise<void> {
  await enqueueMany(
    db,
    jobs.deliverWebhook,
    deliveryIds.map((deliveryId) => ({ payload: { deliveryId } })),
  );
}

/** The next attempt of a delivery, at `runAt` (now when null), under the delivery's key. */
export async function requestDeliveryRetry(db: Queryable, deliveryId: string, runAt: Date | null): Promise<void> {
  await enqueue(db, jobs.deliverWebhook, { deliveryId }, runAt ? { runAt } : {});
}
