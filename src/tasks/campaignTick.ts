/**
 * The campaign scheduler, every 30 minutes (crontab in ./index.ts): starts scheduled campaigns whose
 * start is reached and archives live ones whose end is reached (src/campaigns/campaigns.ts); then
 * the experiments' pass (src/experiments/tick.ts): drafts whose start is reached start, running
 * experiments are analysed on their counts (src/analytics/experiments.ts) and conclude on a winner
 * (promoting it when `auto_promote`) or at their end.
 *
 * A tick missed while no worker ran is backfilled by graphile-worker (backfill period one hour); the
 * backfilled run evaluates at the current time, so one run catches up every campaign that came due
 * meanwhile. `now` in the payload (ISO 8601) evaluates at another time, for operators and tests.
 */
import { runCampaignTick } from '../campaigns/campaigns.ts';
import { experimentResults } from '../analytics/experiments.ts';
import { runExperimentTick, type AnalyseOne } from '../experiments/tick.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

/** An experiment's analysis on its counts now. */
export const analyseExperiment: AnalyseOne = async (db, experiment, arms, now) => (await experimentResults(db, experiment, arms, now)).analysis;

export const campaignTick = defineTask(jobs.campaignTick, {
  async run({ now }, { app, logger }) {
    const at = now ? new Date(now) : new Date();
    const result = await runCampaignTick(app.pool, at);
    logger.info(result, 'campaign tick');
    const experiments = await runExperimentTick(app.pool, at, analyseExperiment);
    for (const f of experiments.failed) logger.error(f, 'an experiment could not be moved this tick; the others were');
    logger.info({ ...experiments, failed: experiments.failed.length }, 'experiment tick');
  },
});
