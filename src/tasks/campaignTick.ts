/**
 * The campaign scheduler, every 30 minutes (crontab in ./index.ts): starts scheduled campaigns whose
 * start is reached and archives live ones whose end is reached (src/campaigns/campaigns.ts).
 *
 * A tick missed while no worker ran is backfilled by graphile-worker (backfill period one hour); the
 * backfilled run evaluates at the current time, so one run catches up every campaign that came due
 * meanwhile. `now` in the payload (ISO 8601) evaluates at another time, for operators and tests.
 */
import { runCampaignTick } from '../campaigns/campaigns.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const campaignTick = defineTask(jobs.campaignTick, {
  async run({ now }, { app, logger }) {
    const result = await runCampaignTick(app.pool, now ? new Date(now) : new Date());
    logger.info(result, 'campaign tick');
  },
});
