/** Executes one directory sync run (started by the API, the nightly crontab or the CLI). */
import { executeRun } from '../sync/engine.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const syncIntegration = defineTask(jobs.syncIntegration, {
  async run({ runId }, { app, helpers, logger }) {
    const run = await executeRun(app, runId, { logger, lastAttempt: helpers.job.attempts >= helpers.job.max_attempts });
    if (run) logger.info({ status: run.status, seen: run.seen, created: run.created, updated: run.updated, deleted: run.deleted }, 'sync run finished');
  },
});
