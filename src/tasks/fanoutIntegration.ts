/** An integration got its access back: the installs held back as access_lost are queued again. */
import { releaseAccessLost } from '../installations/installations.ts';
import { requestInstalls } from '../jobs/triggers.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const fanoutIntegration = defineTask(jobs.fanoutIntegration, {
  async run({ workspaceId, integrationId }, { app, logger }) {
    const targets = await releaseAccessLost(app.pool, workspaceId, integrationId);
    await requestInstalls(app.pool, workspaceId, targets, false);
    logger.info({ integrationId, installs: targets.length }, 'held-back installs queued again');
  },
});
