/** Daily housekeeping: drops per-run bookkeeping that finished runs no longer need. */
import { z } from 'zod';
import { pruneSeen } from '../sync/runs.ts';
import { defineTask } from './define.ts';

export const prune = defineTask({
  name: 'prune',
  payload: z.object({ olderThanHours: z.number().int().min(0).default(24) }).loose(),
  async run({ olderThanHours }, { app, logger }) {
    const seenRows = await pruneSeen(app.pool, olderThanHours);
    logger.info({ seenRows }, 'pruned finished sync bookkeeping');
  },
});
