/**
 * Copies directory photos into assets for one `assets` integration (src/assets/photoSync.ts).
 * Queued after each successful directory run of the same provider kind, and by
 * `sigsync sync --integration <assets integration>`; the job key coalesces bursts.
 */
import { z } from 'zod';
import { syncPhotos as runPhotoSync } from '../assets/photoSync.ts';
import { defineTask } from './define.ts';

export const syncPhotos = defineTask({
  name: 'sync_photos',
  payload: z.object({ workspaceId: z.uuid(), integrationId: z.uuid() }),
  async run({ workspaceId, integrationId }, { app, logger }) {
    await runPhotoSync(app, workspaceId, integrationId, { logger });
  },
});
