/** The nightly directory sync (DIRECTORY_SYNC_CRON): one run per active directory integration. */
import { startAllRuns } from '../integrations/syncRuns.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const syncAll = defineTask(jobs.syncAll, {
  async run(_payload, { app, logger }) {
    const started = await startAllRuns(app.pool, 'schedule');
    logger.info({ runs: started.length }, 'nightly directory sync started');
  },
});
