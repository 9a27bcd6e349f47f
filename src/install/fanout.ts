/**
 * Fan-out: turn a trigger into one install job per (address, kind, integration), enqueued in bulk.
 * The job key is the address, kind and integration, so a burst of triggers coalesces into one
 * install of the latest state. Installs that cannot happen get their status here without a job.
 */
import type { AddJobsFunction } from 'graphile-worker';
import type { InstallJob } from './install.ts';
import type { InstallTarget } from './recipients.ts';

export const INSTALL_TASK = 'install_mailbox';
const BATCH = 1000;

export const installJobKey = (t: Pick<InstallTarget, 'emailId' | 'kind' | 'integrationId'>) => `install:${t.emailId}:${t.kind}:${t.integrationId}`;

export async function enqueueInstalls(addJobs: AddJobsFunction, workspaceId: string, targets: InstallTarget[], forced: boolean, runAt?: Date): Promise<number> {
  for (let i = 0; i < targets.length; i += BATCH) {
    await addJobs(
      targets.slice(i, i + BATCH).map((t) => ({
        identifier: INSTALL_TASK,
        payload: { workspaceId, emailId: t.emailId, kind: t.kind, integrationId: t.integrationId, forced } satisfies InstallJob,
        jobKey: installJobKey(t),
        maxAttempts: 10,
        ...(runAt ? { runAt } : {}),
      })),
    );
  }
  return targets.length;
}
