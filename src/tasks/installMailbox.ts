/** Installs the signature of one (address, kind, integration), one job at a time per slot; see src/install/install.ts and src/installations/slots.ts. */
import pLimit, { type LimitFunction } from 'p-limit';
import { installMailbox } from '../install/install.ts';
import { requestInstalls } from '../jobs/triggers.ts';
import { withInstallSlot } from '../installations/slots.ts';
import type { IntegrationRow } from '../integrations/integrations.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

/** Provider calls in flight per integration in one worker process (integration config `concurrency`, default 4). */
const limits = new Map<string, LimitFunction>();
/** A job whose pace turn is further away than this waits in the queue instead of in a worker. */
const MAX_PACING_WAIT_MS = 1000;
function limitFor(integrationId: string, concurrency: number): LimitFunction {
  let l = limits.get(integrationId);
  if (!l || l.concurrency !== concurrency) {
    l = pLimit(concurrency);
    limits.set(integrationId, l);
  }
  return l;
}

export const installMailboxTask = defineTask(jobs.installMailbox, {
  async run(job, { app, helpers, logger }) {
    const opts = {
      logger,
      // The integration's pace is shared by every worker process (src/installations/pace.ts).
      pace: { maxWaitMs: MAX_PACING_WAIT_MS },
      limit: <T>(integration: IntegrationRow, fn: () => Promise<T>) => limitFor(integration.id, Math.max(1, Number(integration.config.concurrency) || 4))(fn),
    };
    // One install at a time per mailbox slot: a second job for it waits, then sees this one's outcome.
    const outcome = await withInstallSlot(app.pool, job, helpers.job.id, () => installMailbox(app, job, opts), { logger, signal: helpers.abortSignal });
    if (outcome.outcome === 'rescheduled' || outcome.outcome === 'deferred') {
      // The provider asked to slow down, or the pace's next turn is far: wait in the queue, not in a worker.
      await requestInstalls(app.pool, job.workspaceId, [job], job.forced, new Date(Date.now() + outcome.retryAfterMs));
    }
    logger.debug({ outcome: outcome.outcome }, 'install done');
  },
});
