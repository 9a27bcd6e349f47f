/**
 * Sync runs: starting them (one running run per integration, enforced by a partial unique index),
 * and reading them. Starting a run and enqueueing its job happen in one transaction, so a run never
 * exists without the job that executes it.
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import { withTx } from '../db/tx.ts';
import { DIRECTORY_CATEGORIES } from '../domain.ts';

export type SyncTrigger = 'api' | 'schedule' | 'cli' | 'reconnect' | 'confirm';

export interface SyncRunRow {
  id: string;
  workspace_id: string;
  integration_id: string;
  status: 'running' | 'succeeded' | 'failed' | 'needs_confirmation' | 'cancelled';
  trigger: SyncTrigger;
  mode: 'full' | 'delta';
  fallback_reason: string | null;
  confirm_deletions: boolean;
  pages: number;
  seen: number;
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
  skipped: number;
  errors: number;
  rate_limit_waits: number;
  pending_deletions: number;
  checkpoint: { pageToken?: string | null; full?: boolean } | null;
  error_code: string | null;
  error: string | null;
  error_details: { externalId?: string; email?: string; message: string }[];
  started_at: Date;
  finished_at: Date | null;
}

export interface StartOptions {
  trigger: SyncTrigger;
  /** Apply removals the deletion guard would hold back. */
  confirmDeletions?: boolean;
  /** Force a full listing even where an incremental one is possible. */
  full?: boolean;
}

export interface StartedRun {
  id: string;
  integration_id: string;
  integration_name: string;
  category: string;
  status: 'running';
  started_at: Date;
}

/**
 * Starts one run for each given integration that is an active, activated directory integration
 * with no run in progress. Integrations already running or without access are left out.
 */
export async function startRuns(pool: pg.Pool, workspaceId: string, integrationIds: string[] | 'all', opts: StartOptions): Promise<StartedRun[]> {
  return withTx(pool, async (client) => {
    const { rows } = await client.query<StartedRun>(
      `with candidates as (
         select i.id, i.name, i.category from integrations i
          where i.workspace_id = $1 and i.status = 'active' and i.activated
            and i.category = any($2::text[])
            and ($3::uuid[] is null or i.id = any($3::uuid[]))
            and not exists (select 1 from sync_runs r where r.integration_id = i.id and r.status = 'running')
          order by i.created_at
       ), inserted as (
         insert into sync_runs (workspace_id, integration_id, trigger, confirm_deletions, checkpoint)
         select $1, c.id, $4, $5, jsonb_build_object('full', $6::boolean) from candidates c
         on conflict (integration_id) where status = 'running' do nothing
         returning id, integration_id, status, started_at
       )
       select ins.id, ins.integration_id, c.name as integration_name, c.category, ins.status, ins.started_at
         from inserted ins join candidates c on c.id = ins.integration_id`,
      [workspaceId, DIRECTORY_CATEGORIES, integrationIds === 'all' ? null : integrationIds, opts.trigger, opts.confirmDeletions ?? false, opts.full ?? false],
    );
    if (rows.length) {
      await client.query(
        `select graphile_worker.add_jobs(array_agg(row(
            'sync_integration', json_build_object('runId', id), null, null, 10, 'sync:' || integration_id, null, null
          )::graphile_worker.job_spec))
           from unnest($1::uuid[], $2::uuid[]) as t(id, integration_id)`,
        [rows.map((r) => r.id), rows.map((r) => r.integration_id)],
      );
    }
    return rows;
  });
}

/** Every active directory integration of every workspace (the nightly sync). */
export async function startAllRuns(pool: pg.Pool, trigger: SyncTrigger): Promise<StartedRun[]> {
  const { rows } = await pool.query<{ workspace_id: string }>(
    `select distinct workspace_id from integrations where status = 'active' and activated and category = any($1::text[])`,
    [DIRECTORY_CATEGORIES],
  );
  const started: StartedRun[] = [];
  for (const r of rows) started.push(...(await startRuns(pool, r.workspace_id, 'all', { trigger })));
  return started;
}

export async function getRun(db: Queryable, runId: string): Promise<SyncRunRow | undefined> {
  const { rows } = await db.query<SyncRunRow>('select * from sync_runs where id = $1', [runId]);
  return rows[0];
}

/** Cancels the integration's running runs (it was disconnected); their next page finds them cancelled. */
export async function cancelRunningRuns(db: Queryable, integrationId: string, reason: string): Promise<void> {
  await db.query(`update sync_runs set status = 'cancelled', finished_at = now(), error = $2 where integration_id = $1 and status = 'running'`, [integrationId, reason]);
}
