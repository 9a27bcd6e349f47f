/**
 * Planner statistics for the tables a directory sync fills. Autovacuum analyzes a table only about
 * once a minute and only after 10% of it changed, so during a first sync of a large directory the
 * planner believes the tables are nearly empty and picks plans that read whole tables on every
 * page. A run therefore analyzes them itself each time it has doubled the rows it created (from
 * 1,000 on): a handful of ANALYZEs per run, each reading a bounded sample.
 */
import type pg from 'pg';

const TABLES = 'teammates, teammate_sources, emails, smart_field_values, memberships, teammate_photos';
const FIRST_REFRESH = 1000;

export class SyncStatistics {
  private created = 0;
  private next = FIRST_REFRESH;

  /** Counts the rows a committed page created; refreshes the statistics when they have doubled. */
  async afterPage(pool: pg.Pool, created: number): Promise<void> {
    this.created += created;
    if (this.created < this.next) return;
    this.next = this.created * 2;
    await pool.query(`analyze ${TABLES}`);
  }
}
