/**
 * The task registry: every task the worker runs, imported explicitly, and the crontab.
 * Adding a task means adding its entry to the job catalogue (src/jobs/catalogue.ts), its file, and
 * one line here.
 */
import type { CronItem } from 'graphile-worker';
import type { Config } from '../config.ts';
import { jobs } from '../jobs/catalogue.ts';
import type { TaskDefinition } from './define.ts';
import { prune } from './prune.ts';
import { syncIntegration } from './syncIntegration.ts';
import { syncAll } from './syncAll.ts';
import { installMailboxTask } from './installMailbox.ts';
import { fanoutSignature } from './fanoutSignature.ts';
import { fanoutTeammates } from './fanoutTeammates.ts';
import { fanoutIntegration } from './fanoutIntegration.ts';
import { dispatchWebhooks } from './dispatchWebhooks.ts';
import { deliverWebhook } from './deliverWebhook.ts';
import { campaignTick } from './campaignTick.ts';
import { syncPhotos } from './syncPhotos.ts';
import { syncBillingTask, syncSeatsTask } from './billing.ts';
import { analyticsRollup } from './analyticsRollup.ts';

export const tasks: TaskDefinition[] = [
  prune,
  syncIntegration,
  syncAll,
  installMailboxTask,
  fanoutSignature,
  fanoutTeammates,
  fanoutIntegration,
  dispatchWebhooks,
  deliverWebhook,
  campaignTick,
  syncPhotos,
  syncBillingTask,
  syncSeatsTask,
  analyticsRollup,
] as TaskDefinition[];

export function crontab(config: Config): CronItem[] {
  return [
    { task: jobs.prune.name, match: '17 3 * * *', identifier: jobs.prune.name, options: { backfillPeriod: 0 }, payload: {} },
    { task: jobs.syncAll.name, match: config.DIRECTORY_SYNC_CRON, identifier: jobs.syncAll.name, options: { backfillPeriod: 0 }, payload: {} },
    { task: jobs.campaignTick.name, match: '*/30 * * * *', identifier: jobs.campaignTick.name, options: { backfillPeriod: 60 * 60 * 1000 }, payload: {} },
    {
      task: jobs.analyticsRollup.name,
      match: '* * * * *',
      identifier: jobs.analyticsRollup.name,
      options: { backfillPeriod: 0, queueName: jobs.analyticsRollup.queue },
      payload: {},
    },
  ];
}
