/**
 * The task registry: every task the worker runs, imported explicitly, and the crontab.
 * Adding a task means adding its file and one line here.
 */
import type { CronItem } from 'graphile-worker';
import type { Config } from '../config.ts';
import type { TaskDefinition } from './define.ts';
import { prune } from './prune.ts';

export const tasks: TaskDefinition[] = [prune as TaskDefinition];

export function crontab(_config: Config): CronItem[] {
  return [{ task: 'prune', match: '17 3 * * *', identifier: 'prune', options: { backfillPeriod: 0 }, payload: {} }];
}
