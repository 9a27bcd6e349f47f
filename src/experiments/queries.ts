/** Reads of the experiment aggregate (src/experiments/experiments.ts writes it). */
import type { Queryable } from '../db/tx.ts';
import type { PageWindow } from '../db/pages.ts';
import type { ArmRow, ExperimentRow } from './experiments.ts';

/** An experiment of the workspace; `lock` locks it for a write in the caller's transaction. */
export async function getExperiment(db: Queryable, workspaceId: string, id: string, lock = false): Promise<ExperimentRow | undefined> {
  const { rows } = await db.query<ExperimentRow>(`select * from experiments where workspace_id = $1 and id = $2${lock ? ' for update' : ''}`, [
    workspaceId,
    id,
  ]);
  return rows[0];
}

/** The arms of an experiment in their stable order (position; the control first). */
export async function armsOf(db: Queryable, workspaceId: string, experimentId: string): Promise<ArmRow[]> {
  const { rows } = await db.query<ArmRow>('select * from experiment_arms where workspace_id = $1 and experiment_id = $2 order by position', [
    workspaceId,
    experimentId,
  ]);
  return rows;
}

/** The arms of many experiments, by experiment id, each in position order. */
export async function armsOfMany(db: Queryable, workspaceId: string, experimentIds: readonly string[]): Promise<Map<string, ArmRow[]>> {
  const out = new Map<string, ArmRow[]>(experimentIds.map((id) => [id, []]));
  if (!experimentIds.length) return out;
  const { rows } = await db.query<ArmRow>(
    'select * from experiment_arms where workspace_id = $1 and experiment_id = any($2::uuid[]) order by experiment_id, position',
    [workspaceId, experimentIds],
  );
  for (const r of rows) out.get(r.experiment_id)?.push(r);
  return out;
}

/** A campaign's experiments (or the workspace's, when `campaignId` is null), newest first, paged. */
export async function listExperiments(
  db: Queryable,
  workspaceId: string,
  campaignId: string | null,
  page: PageWindow,
): Promise<{ rows: ExperimentRow[]; total: number }> {
  const where = 'from experiments where workspace_id = $1 and ($4::uuid is null or campaign_id = $4)';
  const count = await db.query<{ n: number }>(`select count(*)::int as n ${where.replaceAll('$4', '$2')}`, [workspaceId, campaignId]);
  const { rows } = await db.query<ExperimentRow>(`select * ${where} order by created_at desc, id desc limit $2 offset $3`, [
    workspaceId,
    page.limit,
    page.offset,
    campaignId,
  ]);
  return { rows, total: count.rows[0]?.n ?? 0 };
}

/** The experiment running on a campaign, if any. */
export async function runningExperimentOf(db: Queryable, workspaceId: string, campaignId: string): Promise<ExperimentRow | undefined> {
  const { rows } = await db.query<ExperimentRow>(`select * from experiments where workspace_id = $1 and campaign_id = $2 and status = 'running'`, [
    workspaceId,
    campaignId,
  ]);
  return rows[0];
}

/** Workspaces with an experiment the tick has to look at: a draft whose start is reached, or a running one. */
export async function workspacesWithLiveExperiments(db: Queryable, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ workspace_id: string }>(
    `select distinct workspace_id from experiments where status = 'running' or (status = 'draft' and start_time <= $1)`,
    [now],
  );
  return rows.map((r) => r.workspace_id);
}

/** A workspace's drafts whose start is reached, and its running experiments. */
export async function liveExperiments(db: Queryable, workspaceId: string, now: Date): Promise<{ due: ExperimentRow[]; running: ExperimentRow[] }> {
  const { rows } = await db.query<ExperimentRow>(
    `select * from experiments where workspace_id = $1 and (status = 'running' or (status = 'draft' and start_time <= $2)) order by created_at, id`,
    [workspaceId, now],
  );
  return { due: rows.filter((r) => r.status === 'draft'), running: rows.filter((r) => r.status === 'running') };
}
