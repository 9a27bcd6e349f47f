/** Installs the signature of one (address, kind, integration), one job at a time per slot; see src/install/install.ts and slots.ts. */
import { z } from 'zod';
import pLimit, { type LimitFunction } from 'p-limit';
import { installMailbox } from '../install/install.ts';
import { enqueueInstalls, INSTALL_TASK } from '../install/fanout.ts';
import { InstallPacer } from '../install/pacing.ts';
import { withInstallSlot } from '../install/slots.ts';
import { defineTask } from './define.ts';

const payload = z.object({
  workspaceId: z.uuid(),
  emailId: z.uuid(),
  kind: z.enum(['primary', 'reply', 'internal']),
  integrationId: z.uuid(),
  forced: z.boolean().default(false),
});

/** Provider calls in flight per integration in one worker process (integration config `concurrency`, default 4). */
const limits = new Map<string, LimitFunction>();
/** The pace of installs per integration in this process, learned from 429s (pacing.ts). */
const pacers = new Map<string, InstallPacer>();
/** A job whose turn is further away than this waits in the queue instead of in a worker. */
const MAX_PACING_WAIT_MS = 1000;
function limitFor(integrationId: string, concurrency: number): LimitFunction {
  let l = limits.get(integrationId);
  if (!l || l.concurrency !== concurrency) {
    l = pLimit(concurrency);
    limits.set(integrationId, l);
  }
  return l;
}

export const installMailboxTask = defineTask({
  name: INSTALL_TASK,
  payload,
  async run(job, { app, helpers, logger }) {
    const { rows } = await app.pool.query<{ not_before: Date | null; concurrency: number }>(
      `select case when install_not_before > now() then install_not_before end as not_before,
              coalesce((config->>'concurrency')::int, 4) as concurrency
         from integrations where workspace_id = $1 and id = $2`,
      [job.workspaceId, job.integrationId],
    );
    const integ = rows[0];
    if (integ?.not_before) {
      // The provider asked to slow down: wait in the queue, not in a worker.
      await enqueueInstalls(app.pool, job.workspaceId, [job], job.forced, integ.not_before);
      return;
    }
    let pacer = pacers.get(job.integrationId);
    if (!pacer) pacers.set(job.integrationId, (pacer = new InstallPacer()));
    const wait = pacer.reserve(MAX_PACING_WAIT_MS);
    if (wait > MAX_PACING_WAIT_MS) {
      await enqueueInstalls(app.pool, job.workspaceId, [job], job.forced, new Date(Date.now() + wait));
      return;
    }
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // One install at a time per mailbox slot: a second job for it waits, then sees this one's outcome.
    const limit = limitFor(job.integrationId, Math.max(1, integ?.concurrency ?? 4));
    const outcome = await withInstallSlot(app.pool, job, helpers.job.id, () => limit(() => installMailbox(app, job, { logger })), { logger, signal: helpers.abortSignal });
    if (outcome.outcome === 'rescheduled') {
      pacer.rateLimited(outcome.retryAfterMs);
      await enqueueInstalls(app.pool, job.workspaceId, [job], job.forced, new Date(Date.now() + outcome.retryAfterMs));
    } else if (outcome.outcome === 'installed' || outcome.outcome === 'failed') {
      pacer.completed();
    }
    logger.debug({ outcome: outcome.outcome }, 'install done');
  },
});
