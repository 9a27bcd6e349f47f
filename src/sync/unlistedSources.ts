/**
 * Read model: which of an integration's directory sources a sync run did not list, for the removals
 * after a complete listing (engine.ts). It joins two aggregates' tables, `teammate_sources` (the
 * teammates, src/teammates/) and `sync_run_seen` (the sync runs, src/integrations/syncRuns.ts), in
 * one set-based statement: a full listing of a large directory sees hundreds of thousands of
 * users, too many to carry from one owner to the other.
 */
import type { Queryable } from '../db/tx.ts';
import type { Unlisted } from '../teammates/teammates.ts';
import { countSources } from '../teammates/queries.ts';

/**
 * The integration's sources the run did not see as active (a full listing), or saw as removed (an
 * incremental one), and how many sources the integration has.
 */
export async function unlistedSources(
  db: Queryable,
  integrationId: string,
  runId: string,
  mode: 'full' | 'delta',
): Promise<{ unlisted: Unlisted[]; total: number }> {
  const candidates = await db.query<Unlisted>(
    mode === 'full'
      ? `select ts.teammate_id, ts.external_id from teammate_sources ts
          where ts.integration_id = $1
            and not exists (select 1 from sync_run_seen s where s.run_id = $2 and s.external_id = ts.external_id and not s.removed)`
      : `select ts.teammate_id, ts.external_id from teammate_sources ts
           join sync_run_seen s on s.run_id = $2 and s.external_id = ts.external_id and s.removed
          where ts.integration_id = $1`,
    [integrationId, runId],
  );
  if (!candidates.rows.length) return { unlisted: [], total: 0 };
  return { unlisted: candidates.rows, total: await countSources(db, integrationId) };
}
