/**
 * Planner statistics for the tables a directory sync fills. Autovacuum analyzes a table only about
 * once a minute and only after 10% of it changed, so during a first sync of a large directory the
 * planner believes the tables are nearly empty and picks plans that read whole tables on every
 * page (the foreign-key checks above all). A run therefore analyzes them itself each time it has
 * doubled the rows it created (from 1,000 on): a handful of ANALYZEs per run.
 *
 * The plans a sync needs depend on the tables' sizes, not on fine distributions, so these ANALYZEs
 * read a small sample (statistics target 10: 3,000 rows a table instead of 30,000); autovacuum
 * later analyzes at the default target.
 */
import type pg from 'pg';
import { withTx } from '../db/tx.ts';
import type { StageTimer } from './timing.ts';

const TABLES = 'teammates, teammate_sources, emails, teammate_photos';
const FIRST_REFRESH = 1000;
const SAMPLE_TARGET = 10;

export class SyncStatistics {
  private created = 0;
  private next = FIRST_REFRESH;

  /** Counts the rows a committed page created; refreshes the statistics when they have doubled. */
  async afterPage(pool: pg.Pool, created: number, timer?: StageTimer): Promise<void> {
    this.created += created;
    if (this.created < this.next) return;
    this.next = this.created * 2;
    const analyze = () =>
      withTx(pool, async (c) => {
        await c.query(`set local default_statistics_target = ${SAMPLE_TARGET}`);
        await c.query(`analyze ${TABLES}`);
      });
    await (timer ? timer.time('statistics', analyze) : analyze());
  }
}
