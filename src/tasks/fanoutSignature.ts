/** Publish, variant publish, forced re-install, campaign change: install jobs for a signature's recipients. */
import { targetsForTeammates } from '../install/routing.ts';
import { assignedTeammates } from '../signatures/choices.ts';
import { requestInstalls } from '../jobs/triggers.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const fanoutSignature = defineTask(jobs.fanoutSignature, {
  async run({ workspaceId, signatureId, kinds, forced }, { app, logger }) {
    const teammates = await assignedTeammates(app.pool, workspaceId, signatureId);
    const targets = await targetsForTeammates(app.pool, workspaceId, teammates, kinds);
    await requestInstalls(app.pool, workspaceId, targets, forced);
    logger.info({ signatureId, teammates: teammates.length, installs: targets.length, forced }, 'signature installs queued');
  },
});
