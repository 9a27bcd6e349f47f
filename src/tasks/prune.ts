/**
 * Daily housekeeping: drops per-run bookkeeping that finished runs no longer need, raw clicks,
 * views, recorded events and visitors older than the workspace's retention, or ANALYTICS_RETENTION_DAYS
 * when it has none (the rollups the reports read stay),
 * and the console's expired or ended sessions and used or expired sign-in links.
 */
import { pruneClicks } from '../analytics/clicks.ts';
import { pruneEvents } from '../analytics/events.ts';
import { pruneViews } from '../analytics/views.ts';
import { pruneConsoleSessions } from '../console/sessions.ts';
import { pruneSeen } from '../integrations/syncRuns.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const prune = defineTask(jobs.prune, {
  async run({ olderThanHours }, { app, logger }) {
    const seenRows = await pruneSeen(app.pool, olderThanHours);
    logger.info({ seenRows }, 'pruned finished sync bookkeeping');
    const days = app.config.ANALYTICS_RETENTION_DAYS;
    const [clicks, views, events] = [await pruneClicks(app.pool, days), await pruneViews(app.pool, days), await pruneEvents(app.pool, days)];
    logger.info({ clicks, views, events, days }, 'pruned raw analytics past retention');
    const consoleRows = await pruneConsoleSessions(app.pool);
    logger.info(consoleRows, 'pruned expired console sessions and sign-in links');
  },
});
