/** Publish, variant publish, forced re-install, campaign change: install jobs for a signature's recipients. */
import { z } from 'zod';
import { assignedTeammates, targetsForTeammates } from '../install/recipients.ts';
import { enqueueInstalls } from '../install/fanout.ts';
import { defineTask } from './define.ts';

export const fanoutSignature = defineTask({
  name: 'fanout_signature',
  payload: z.object({
    workspaceId: z.uuid(),
    signatureId: z.uuid(),
    kinds: z.array(z.enum(['primary', 'reply', 'internal'])).min(1),
    forced: z.boolean(),
  }),
  async run({ workspaceId, signatureId, kinds, forced }, { app, logger }) {
    const teammates = await assignedTeammates(app.pool, workspaceId, signatureId);
    const targets = await targetsForTeammates(app.pool, workspaceId, teammates, kinds);
    await enqueueInstalls(app.pool, workspaceId, targets, forced);
    logger.info({ signatureId, teammates: teammates.length, installs: targets.length, forced }, 'signature installs queued');
  },
});
