/**
 * Banner experiments: owner of `experiments` and `experiment_arms`, and of `experiment.concluded`.
 *
 *   draft ──start (or start_time reached, tick)──> running ──winner or end_time (tick)──> concluded
 *   draft | running ──stop──> stopped                                          experiment.concluded
 *   running | concluded | stopped ──promote(arm)──> the campaign shows that arm's banner
 *
 * While an experiment runs, each teammate's signature shows the banner of the arm assigned to them
 * (src/experiments/assignment.ts; the renderer applies it in src/render/load.ts) in place of the
 * campaign's. Every move into or out of running, and a promotion, reinstalls the campaign's targeted
 * signatures when the campaign is active, as a campaign move does. Every move is one conditional
 * UPDATE (`... where status = <from>`), so two workers or two requests racing move an experiment
 * once, and experiment.concluded is written once, in the transaction of the move.
 */
import type { Queryable } from '../db/tx.ts';
import { emitEvent } from '../db/outbox.ts';
import { requestBannerInstalls, updateCampaign } from '../campaigns/campaigns.ts';
import { getCampaign } from '../campaigns/queries.ts';
import type { Analysis, Policy } from './analysis.ts';

export const EXPERIMENT_STATUSES = ['draft', 'running', 'concluded', 'stopped'] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];
export type ExperimentMode = 'ab' | 'aa';

export interface ExperimentRow {
  id: string;
  workspace_id: string;
  campaign_id: string;
  name: string;
  status: ExperimentStatus;
  mode: ExperimentMode;
  unit: 'sender';
  primary_metric: 'human_ctr';
  probability_to_win: number | null;
  max_expected_loss: number | null;
  min_exposures_per_arm: number | null;
  min_clicks_per_arm: number | null;
  alpha: number | null;
  auto_promote: boolean;
  start_time: Date | null;
  end_time: Date | null;
  started_at: Date | null;
  concluded_at: Date | null;
  winner_arm_id: string | null;
  promoted_arm_id: string | null;
  promoted_at: Date | null;
  results: Analysis | null;
  created_at: Date;
  updated_at: Date;
}

export interface ArmRow {
  id: string;
  workspace_id: string;
  experiment_id: string;
  position: number;
  name: string;
  weight: number;
  content: Record<string, unknown> | null;
  created_at: Date;
}

/** The policy numbers an experiment sets; the others are the build's defaults (DEFAULT_POLICY). */
export function policyOf(e: ExperimentRow): Partial<Policy> {
  const p: Partial<Policy> = {};
  if (e.probability_to_win !== null) p.probabilityToWin = e.probability_to_win;
  if (e.max_expected_loss !== null) p.maxExpectedLoss = e.max_expected_loss;
  if (e.min_exposures_per_arm !== null) p.minExposuresPerArm = e.min_exposures_per_arm;
  if (e.min_clicks_per_arm !== null) p.minClicksPerArm = e.min_clicks_per_arm;
  if (e.alpha !== null) p.alpha = e.alpha;
  return p;
}

export interface ExperimentWrite {
  campaignId: string;
  name: string;
  mode: ExperimentMode;
  autoPromote?: boolean | undefined;
  startTime?: Date | null | undefined;
  endTime?: Date | null | undefined;
  policy?: Partial<Policy> | undefined;
  /** In their stable order: arms[0] is the control. Content null only in A/A mode (the campaign's banner). */
  arms: { name: string; weight: number; content: unknown }[];
}

/** Creates a draft experiment with its arms (the caller validated the write). */
export async function createExperiment(db: Queryable, workspaceId: string, w: ExperimentWrite): Promise<{ experiment: ExperimentRow; arms: ArmRow[] }> {
  const p = w.policy ?? {};
  const { rows } = await db.query<ExperimentRow>(
    `insert into experiments (workspace_id, campaign_id, name, mode, auto_promote, start_time, end_time,
                              probability_to_win, max_expected_loss, min_exposures_per_arm, min_clicks_per_arm, alpha)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) returning *`,
    [
      workspaceId,
      w.campaignId,
      w.name,
      w.mode,
      w.autoPromote ?? false,
      w.startTime ?? null,
      w.endTime ?? null,
      p.probabilityToWin ?? null,
      p.maxExpectedLoss ?? null,
      p.minExposuresPerArm ?? null,
      p.minClicksPerArm ?? null,
      p.alpha ?? null,
    ],
  );
  const experiment = rows[0]!;
  const arms = await db.query<ArmRow>(
    `insert into experiment_arms (workspace_id, experiment_id, position, name, weight, content)
     select $1, $2, i.position - 1, i.name, i.weight, i.content
       from unnest($3::text[], $4::float8[], $5::jsonb[]) with ordinality as i(name, weight, content, position)
     returning *`,
    [
      workspaceId,
      experiment.id,
      w.arms.map((a) => a.name),
      w.arms.map((a) => a.weight),
      w.arms.map((a) => (a.content == null ? null : JSON.stringify(a.content))),
    ],
  );
  return { experiment, arms: arms.rows.sort((a, b) => a.position - b.position) };
}

/** Reinstalls the campaign's targeted signatures when it is active (what it shows changed). */
async function reinstallBanners(db: Queryable, workspaceId: string, campaignId: string): Promise<void> {
  const campaign = await getCampaign(db, workspaceId, campaignId);
  if (campaign?.status === 'active') await requestBannerInstalls(db, workspaceId, campaign.signature_template_ids);
}

/** draft -> running at `now`; undefined when it was not a draft (a concurrent move). */
export async function startExperiment(db: Queryable, workspaceId: string, id: string, now: Date): Promise<ExperimentRow | undefined> {
  const { rows } = await db.query<ExperimentRow>(
    `update experiments set status = 'running', started_at = $3 where workspace_id = $1 and id = $2 and status = 'draft' returning *`,
    [workspaceId, id, now],
  );
  const e = rows[0];
  if (e) await reinstallBanners(db, workspaceId, e.campaign_id);
  return e;
}

/** draft | running -> stopped at `now` (by hand: no decision, no event); undefined when it was neither. */
export async function stopExperiment(db: Queryable, workspaceId: string, id: string, now: Date): Promise<ExperimentRow | undefined> {
  const { rows } = await db.query<ExperimentRow & { was: ExperimentStatus }>(
    `with cur as (select id, status from experiments where workspace_id = $1 and id = $2 and status in ('draft', 'running') for update)
     update experiments e set status = 'stopped', concluded_at = $3 from cur where e.id = cur.id returning e.*, cur.status as was`,
    [workspaceId, id, now],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { was, ...e } = row;
  if (was === 'running') await reinstallBanners(db, workspaceId, e.campaign_id);
  return e;
}

/**
 * running -> concluded at `now` with the analysis it concluded on (its winner, when it declared one),
 * and experiment.concluded with the figures, once. Undefined when it was no longer running.
 */
export async function concludeExperiment(
  db: Queryable,
  workspaceId: string,
  id: string,
  arms: readonly ArmRow[],
  analysis: Analysis,
  now: Date,
): Promise<ExperimentRow | undefined> {
  const winner = analysis.decision.status === 'winner' ? analysis.decision.winner : null;
  const { rows } = await db.query<ExperimentRow>(
    `update experiments set status = 'concluded', concluded_at = $3, winner_arm_id = $4, results = $5
      where workspace_id = $1 and id = $2 and status = 'running' returning *`,
    [workspaceId, id, now, winner, JSON.stringify(analysis)],
  );
  const e = rows[0];
  if (!e) return undefined;
  await emitEvent(
    db,
    workspaceId,
    'experiment.concluded',
    {
      experiment: {
        uuid: e.id,
        name: e.name,
        campaign_uuid: e.campaign_id,
        mode: e.mode,
        status: 'concluded',
        winner_arm_uuid: e.winner_arm_id,
        started_at: e.started_at!.toISOString(),
        concluded_at: now.toISOString(),
        arms: arms.map((a) => ({ uuid: a.id, name: a.name, position: a.position, weight: a.weight })),
      },
      results: analysis as unknown as Record<string, unknown>,
    },
    now,
  );
  await reinstallBanners(db, workspaceId, e.campaign_id);
  return e;
}

/**
 * The campaign continues with `arm`'s banner (an A/A arm without its own shows the campaign's, so
 * the campaign is left as it is); a running experiment stops. The caller checked the rules
 * (src/experiments/states.ts). Undefined when the experiment was promoted meanwhile.
 */
export async function promoteArm(db: Queryable, workspaceId: string, id: string, arm: ArmRow, now: Date): Promise<ExperimentRow | undefined> {
  const { rows } = await db.query<ExperimentRow>(
    `update experiments set promoted_arm_id = $3, promoted_at = $4,
            status = case when status = 'running' then 'stopped' else status end,
            concluded_at = coalesce(concluded_at, $4)
      where workspace_id = $1 and id = $2 and status <> 'draft' and promoted_arm_id is null returning *`,
    [workspaceId, id, arm.id, now],
  );
  const e = rows[0];
  if (!e) return undefined;
  const campaign = await getCampaign(db, workspaceId, e.campaign_id, true);
  // updateCampaign reinstalls an active campaign's signatures when its content changes.
  if (campaign && arm.content !== null) await updateCampaign(db, campaign, { content: arm.content });
  else await reinstallBanners(db, workspaceId, e.campaign_id);
  return e;
}
