/** A directory sync or a hand edit changed these teammates: reinstall their mailboxes (unchanged ones are skipped by hash). */
import { stopAddresses } from '../installations/installations.ts';
import { addressesOfRemoved } from '../teammates/queries.ts';
import { targetsForTeammates } from '../install/routing.ts';
import { installedKinds } from '../signatures/queries.ts';
import { requestInstalls } from '../jobs/triggers.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const fanoutTeammates = defineTask(jobs.fanoutTeammates, {
  async run({ workspaceId, teammateIds }, { app, logger }) {
    // Removed teammates: their installations stop.
    await stopAddresses(app.pool, workspaceId, await addressesOfRemoved(app.pool, workspaceId, teammateIds));
    const kinds = await installedKinds(app.pool, workspaceId);
    const targets = await targetsForTeammates(app.pool, workspaceId, teammateIds, kinds);
    await requestInstalls(app.pool, workspaceId, targets, false);
    logger.info({ teammates: teammateIds.length, installs: targets.length }, 'teammate installs queued');
  },
});
