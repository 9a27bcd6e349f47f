/**
 * Sync runs: starting them (one running run per integration, enforced by a partial unique index),
 * executing them one execution at a time, recording their pages and ending them, and reading them.
 * Starting a run and enqueueing its job happen in one transaction, so a run never exists without
 * the job that executes it.
 *
 * Exclusive execution: an execution claims the run (claimRun: a fresh `executor` id on the row),
 * and each page's transaction and the completion first lock the row and check that it still names
 * that execution (holdRun). A second execution of the same run (a job retried while its first
 * attempt is alive, a stale lock released, a manual call) takes the run over after the page being
 * written commits; the first then finds it taken at its next page and stops without writing. Two
 * executions never both write, and the newer one resumes from the checkpoint the older left.
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import { withTx } from '../db/tx.ts';
import { DIRECTORY_CATEGORIES } from '../domain.ts';
import { jobs } from '../jobs/catalogue.ts';
import { requestSyncRuns } from '../jobs/triggers.ts';

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
  /** The execution that holds the run (claimRun), null before the first; when the first took it up. */
  executor: string | null;
  claimed_at: Date | null;
  /** Milliseconds per write stage and per provider wait, summed over the run's pages. */
  stage_ms: Record<string, number>;
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
      await requestSyncRuns(client, rows);
    }
    return rows;
  });
}

/**
 * The runs in progress of the given integrations of a workspace (all its directory integrations
 * for 'all'), in the shape startRuns answers: a command that found them already running follows them.
 */
export async function runningRuns(db: Queryable, workspaceId: string, integrationIds: string[] | 'all'): Promise<StartedRun[]> {
  const { rows } = await db.query<StartedRun>(
    `select r.id, r.integration_id, i.name as integration_name, i.category, r.status, r.started_at
       from sync_runs r join integrations i on i.id = r.integration_id
      where r.workspace_id = $1 and r.status = 'running' and ($2::uuid[] is null or r.integration_id = any($2::uuid[]))
      order by i.created_at`,
    [workspaceId, integrationIds === 'all' ? null : integrationIds],
  );
  return rows;
}

/** Where the job that executes a run stands in the queue (its key is `sync:<integration id>`). */
export interface RunJobState {
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  run_at: Date;
  /** The worker running it now, if one is. */
  locked_by: string | null;
  locked_at: Date | null;
}

/** The queued job of a running run's integration, or undefined when none is queued. */
export async function runJobState(db: Queryable, integrationId: string): Promise<RunJobState | undefined> {
  const { rows } = await db.query<RunJobState>(
    `select attempts, max_attempts, last_error, run_at, locked_by, locked_at from graphile_worker.jobs
      where task_identifier = $1 and key = $2 order by id desc limit 1`,
    [jobs.syncIntegration.name, jobs.syncIntegration.key!({ integrationId })],
  );
  return rows[0];
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

/** How many users the integration's last complete (succeeded) run saw; 0 without one. */
export async function lastCompleteRunSeen(db: Queryable, integrationId: string): Promise<number> {
  const { rows } = await db.query<{ seen: number }>(
    `select seen from sync_runs where integration_id = $1 and status = 'succeeded' order by finished_at desc limit 1`,
    [integrationId],
  );
  return rows[0]?.seen ?? 0;
}

export async function getRun(db: Queryable, runId: string): Promise<SyncRunRow | undefined> {
  const { rows } = await db.query<SyncRunRow>('select * from sync_runs where id = $1', [runId]);
  return rows[0];
}

/** The run was taken over by another execution of it (or ended meanwhile): stop, write nothing. */
export class RunTakenOverError extends Error {
  override readonly name = 'RunTakenOverError';
  constructor(runId: string) {
    super(`sync run ${runId} is being executed by another execution, or has ended`);
  }
}

/** Claims a running run for a new execution; undefined when the run is not running. */
export async function claimRun(db: Queryable, runId: string): Promise<SyncRunRow | undefined> {
  const { rows } = await db.query<SyncRunRow>(
    `update sync_runs set executor = gen_random_uuid(), claimed_at = coalesce(claimed_at, now()), updated_at = now()
      where id = $1 and status = 'running' returning *`,
    [runId],
  );
  return rows[0];
}

/**
 * Checks that `executor` still holds the run, and with `lock` (the default) locks the run row for
 * the rest of the transaction so that no other execution can claim it before the commit; throws
 * RunTakenOverError otherwise. Every transaction that writes for the run checks it first, and locks
 * it before writing the run's own row (the lock is FOR NO KEY UPDATE: it does not wait for other
 * transactions of the run that reference the row, such as another page's seen users).
 */
export async function holdRun(client: pg.PoolClient, runId: string, executor: string, lock = true): Promise<void> {
  const { rowCount } = await client.query(`select 1 from sync_runs where id = $1 and executor = $2 and status = 'running'${lock ? ' for no key update' : ''}`, [
    runId,
    executor,
  ]);
  if (!rowCount) throw new RunTakenOverError(runId);
}

export interface PageCounters {
  seen: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  errors: number;
  errorDetails: unknown[];
  /** The provider's token for the next page (null: the listing is complete). */
  nextPageToken: string | null | undefined;
  /** The run's stage timings so far, this page included. */
  stageMs: Record<string, number>;
}

/** Adds one written page to the run and moves its checkpoint, in the page's transaction. */
export async function recordPage(client: pg.PoolClient, runId: string, c: PageCounters, maxErrorDetails: number): Promise<void> {
  await client.query(
    `update sync_runs set pages = pages + 1, seen = seen + $2, created = created + $3, updated = updated + $4,
            unchanged = unchanged + $5, skipped = skipped + $6, errors = errors + $7,
            error_details = case when jsonb_array_length(error_details) >= ${maxErrorDetails} then error_details
                                 else error_details || $8::jsonb end,
            checkpoint = jsonb_build_object('pageToken', $9::text), stage_ms = $10::jsonb, updated_at = now()
      where id = $1`,
    [
      runId,
      c.seen,
      c.created,
      c.updated,
      c.unchanged,
      c.skipped,
      c.errors,
      JSON.stringify(c.errorDetails.slice(0, maxErrorDetails)),
      c.nextPageToken ?? null,
      JSON.stringify(c.stageMs),
    ],
  );
}

/** The run's stage timings (StageTimer), for work done after its pages. */
export async function saveStageMs(client: pg.PoolClient, runId: string, stageMs: Record<string, number>): Promise<void> {
  await client.query('update sync_runs set stage_ms = $2::jsonb, updated_at = now() where id = $1', [runId, JSON.stringify(stageMs)]);
}

/** The listing mode a run's first page starts with, and why it is a full one when it fell back. */
export async function setRunMode(db: Queryable, runId: string, mode: 'full' | 'delta', reason: string | null): Promise<void> {
  await db.query('update sync_runs set mode = $2, fallback_reason = coalesce(fallback_reason, $3) where id = $1', [runId, mode, reason]);
}

/** The incremental token was refused: the run starts over as a full listing, forgetting whom it saw. */
export async function restartAsFull(client: pg.PoolClient, runId: string, reason: string): Promise<void> {
  await client.query(`update sync_runs set mode = 'full', fallback_reason = $2, checkpoint = null where id = $1`, [runId, reason]);
  await client.query('delete from sync_run_seen where run_id = $1', [runId]);
}

export async function countRateLimitWait(db: Queryable, runId: string): Promise<void> {
  await db.query('update sync_runs set rate_limit_waits = rate_limit_waits + 1 where id = $1', [runId]);
}

/** Records who a run saw, as active or as removed, for the removals after a complete listing. */
export async function recordSeen(db: Queryable, runId: string, active: string[], removed: string[], groupsPending = false): Promise<void> {
  await db.query(
    `insert into sync_run_seen (run_id, external_id, removed, groups_pending)
     select $1::uuid, x, false, $4 from unnest($2::text[]) x
     union all select $1::uuid, x, true, false from unnest($3::text[]) x
     on conflict (run_id, external_id) do update set removed = excluded.removed, groups_pending = excluded.groups_pending`,
    [runId, active, removed, groupsPending],
  );
}

/**
 * Up to `limit` seen users whose groups are still pending (listed before they were known), by
 * external id. A user leaves the list when its groups are written (clearPendingGroups).
 */
export async function pendingGroupsUsers(db: Queryable, runId: string, limit: number): Promise<string[]> {
  const { rows } = await db.query<{ external_id: string }>('select s.external_id from sync_run_seen s where s.run_id = $1 and s.groups_pending limit $2', [
    runId,
    limit,
  ]);
  return rows.map((r) => r.external_id);
}

/** These seen users' groups are written: they leave the pending list. */
export async function clearPendingGroups(client: pg.PoolClient, runId: string, externalIds: string[]): Promise<void> {
  await client.query('update sync_run_seen set groups_pending = false where run_id = $1 and external_id = any($2::text[]) and groups_pending', [
    runId,
    externalIds,
  ]);
}

export type EndFields = Partial<Pick<SyncRunRow, 'error_code' | 'error' | 'deleted' | 'pending_deletions'>>;

/**
 * Ends a running run; a run already ended stays as it is, and so does a run another execution took
 * over (when `executor` is given). Answers the ended run, or undefined when it did not end it.
 */
export async function finishRun(
  db: Queryable,
  runId: string,
  status: SyncRunRow['status'],
  fields: EndFields = {},
  executor: string | null = null,
): Promise<SyncRunRow | undefined> {
  const { rows } = await db.query<SyncRunRow>(
    `update sync_runs set status = $2, finished_at = now(), error_code = $3, error = $4,
            deleted = coalesce($5, deleted), pending_deletions = coalesce($6, pending_deletions), checkpoint = case when $2 = 'succeeded' or $2 = 'needs_confirmation' then null else checkpoint end
      where id = $1 and status = 'running' and ($7::uuid is null or executor = $7) returning *`,
    [runId, status, fields.error_code ?? null, fields.error ?? null, fields.deleted ?? null, fields.pending_deletions ?? null, executor],
  );
  return rows[0];
}

/** Cancels the integration's running runs (it was disconnected); their next page finds them cancelled. */
export async function cancelRunningRuns(db: Queryable, integrationId: string, reason: string): Promise<void> {
  await db.query(`update sync_runs set status = 'cancelled', finished_at = now(), error = $2 where integration_id = $1 and status = 'running'`, [
    integrationId,
    reason,
  ]);
}

/** Drops whom finished runs saw, once they ended more than `olderThanHours` ago; answers the rows dropped. */
export async function pruneSeen(db: Queryable, olderThanHours: number): Promise<number> {
  const { rowCount } = await db.query(
    `delete from sync_run_seen s using sync_runs r
      where s.run_id = r.id and r.status <> 'running' and r.finished_at < now() - make_interval(hours => $1)`,
    [olderThanHours],
  );
  return rowCount ?? 0;
}
