/**
 * The task registry: every task the worker runs, imported explicitly, and the crontab.
 * Adding a task means adding its file and one line here.
 */
import type { CronItem } from 'graphile-worker';
import type { Config } from '../config.ts';
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
    { task: 'prune', match: '17 3 * * *', identifier: 'prune', options: { backfillPeriod: 0 }, payload: {} },
    { task: 'directory_sync_all', match: config.DIRECTORY_SYNC_CRON, identifier: 'directory_sync_all', options: { backfillPeriod: 0 }, payload: {} },
    { task: 'campaign_tick', match: '*/30 * * * *', identifier: 'campaign_tick', options: { backfillPeriod: 60 * 60 * 1000 }, payload: {} },
    { task: 'analytics_rollup', match: '* * * * *', identifier: 'analytics_rollup', options: { backfillPeriod: 0, queueName: 'analytics_rollup' }, payload: {} },
  ];
}
