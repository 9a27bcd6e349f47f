/**
 * Keeps the analytics rollups current, every minute (crontab in ./index.ts): recomputes the buckets
 * of the current UTC day from raw clicks, events and visitors (src/analytics/rollups.ts). `since`
 * (a date, YYYY-MM-DD) rebuilds from that day on, for example after an import; `workspace_id`
 * limits it to one workspace. First, the privacy sweep removes the viewer and clicker keys past the
 * repeat window where they are not kept per person (src/analytics/privacy.ts).
 */
import { sweepPersonalKeys } from '../analytics/privacy.ts';
import { rebuildRollups } from '../analytics/rollups.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const analyticsRollup = defineTask(jobs.analyticsRollup, {
  async run({ since, workspace_id }, { app, logger }) {
    const swept = await sweepPersonalKeys(app.pool, workspace_id ?? null);
    if (swept.views || swept.clicks) logger.debug(swept, 'removed per-person keys past the repeat window');
    const result = await rebuildRollups(app.pool, {
      ...(since ? { since: new Date(`${since}T00:00:00Z`) } : {}),
      ...(workspace_id ? { workspaceId: workspace_id } : {}),
    });
    logger.debug({ since: result.since.toISOString(), rows: result.rows }, 'analytics rollups rebuilt');
  },
});
