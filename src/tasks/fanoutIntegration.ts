/** An integration got its access back: the installs held back as access_lost are queued again. */
import { z } from 'zod';
import { enqueueInstalls } from '../install/fanout.ts';
import { defineTask } from './define.ts';

export const fanoutIntegration = defineTask({
  name: 'fanout_integration',
  payload: z.object({ workspaceId: z.uuid(), integrationId: z.uuid() }),
  async run({ workspaceId, integrationId }, { app, logger }) {
    const { rows } = await app.pool.query<{ email_id: string; kind: 'primary' | 'reply' | 'internal' }>(
      `update installations set status = 'pending', error_code = null, error_message = null
        where workspace_id = $1 and integration_id = $2 and status = 'access_lost'
        returning email_id, kind`,
      [workspaceId, integrationId],
    );
    const targets = [...new Map(rows.map((r) => [`${r.email_id}:${r.kind}`, { emailId: r.email_id, kind: r.kind, integrationId }])).values()];
    await enqueueInstalls(app.pool, workspaceId, targets, false);
    logger.info({ integrationId, installs: targets.length }, 'held-back installs queued again');
  },
});
