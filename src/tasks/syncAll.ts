/** The nightly directory sync (DIRECTORY_SYNC_CRON): one run per active directory integration. */
import { z } from 'zod';
import { startAllRuns } from '../sync/runs.ts';
import { defineTask } from './define.ts';

export const syncAll = defineTask({
  name: 'directory_sync_all',
  payload: z.object({}).loose(),
  async run(_payload, { app, logger }) {
    const started = await startAllRuns(app.pool, 'schedule');
    logger.info({ runs: started.length }, 'nightly directory sync started');
  },
});
