/** A directory sync or a hand edit changed these teammates: reinstall their mailboxes (unchanged ones are skipped by hash). */
import { stopTeammates } from '../installations/installations.ts';
import { targetsForTeammates } from '../install/routing.ts';
import { enqueueInstalls } from '../install/fanout.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const fanoutTeammates = defineTask(jobs.fanoutTeammates, {
  async run({ workspaceId, teammateIds }, { app, logger }) {
    // Removed teammates: their installations stop.
    await stopTeammates(app.pool, workspaceId, teammateIds, { onlyRemoved: true });
    const kinds = (
      await app.pool.query<{ kind: 'primary' | 'reply' | 'internal' }>(
        `select 'primary' as kind union select distinct v.kind from signature_variants v
          where v.workspace_id = $1 and v.activated and v.content is not null`,
        [workspaceId],
      )
    ).rows.map((r) => r.kind);
    const targets = await targetsForTeammates(app.pool, workspaceId, teammateIds, kinds);
    await enqueueInstalls(app.pool, workspaceId, targets, false);
    logger.info({ teammates: teammateIds.length, installs: targets.length }, 'teammate installs queued');
  },
});
