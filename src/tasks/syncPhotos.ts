/**
 * Copies directory photos into assets for one `assets` integration (src/assets/photoSync.ts).
 * Queued after each successful directory run of the same provider kind, and by
 * `sigsync sync --integration <assets integration>`; the job key coalesces bursts.
 */
import { syncPhotos as runPhotoSync } from '../assets/photoSync.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const syncPhotos = defineTask(jobs.syncPhotos, {
  async run({ workspaceId, integrationId }, { app, logger }) {
    await runPhotoSync(app, workspaceId, integrationId, { logger });
  },
});
