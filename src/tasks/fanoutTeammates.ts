/** A directory sync or a hand edit changed these teammates: reinstall their mailboxes (unchanged ones are skipped by hash). */
import { z } from 'zod';
import { targetsForTeammates } from '../install/recipients.ts';
import { enqueueInstalls } from '../install/fanout.ts';
import { defineTask } from './define.ts';

export const fanoutTeammates = defineTask({
  name: 'fanout_teammates',
  payload: z.object({ workspaceId: z.uuid(), teammateIds: z.array(z.uuid()) }),
  async run({ workspaceId, teammateIds }, { app, logger }) {
    // Removed teammates: their installations stop.
    await app.pool.query(
      `update installations i set status = 'not_installed', error_code = null, error_message = null, failing_since = null
         from emails e join teammates t on t.id = e.teammate_id
        where i.email_id = e.id and i.workspace_id = $1 and t.id = any($2::uuid[]) and t.deleted_at is not null and i.status <> 'not_installed'`,
      [workspaceId, teammateIds],
    );
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
