/**
 * The experiments' pass of the campaign tick (src/tasks/campaignTick.ts), at time `now`:
 *
 * - drafts whose `start_time` is reached start (those that cannot, states.ts's startProblem, wait);
 * - each running experiment is analysed (`analyseOne`: the counts are read by their table's owner,
 *   src/analytics/experiments.ts); on a winner it concludes, and promotes the winner when
 *   `auto_promote`; past its `end_time`, or once its campaign is archived, it concludes without one.
 *
 * One transaction per experiment, the experiment locked; each move is conditional on the state, so
 * concurrent ticks move an experiment once and write experiment.concluded once.
 */
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import { getCampaign } from '../campaigns/queries.ts';
import type { Analysis } from './analysis.ts';
import { recordAudit, type Actor } from '../db/audit.ts';
import { concludeExperiment, promoteArm, startExperiment, type ArmRow, type ExperimentRow } from './experiments.ts';
import { armsOf, getExperiment, liveExperiments, workspacesWithLiveExperiments } from './queries.ts';
import { startProblem } from './states.ts';

export type AnalyseOne = (db: Queryable, experiment: ExperimentRow, arms: ArmRow[], now: Date) => Promise<Analysis>;

export interface ExperimentTickResult {
  started: number;
  analysed: number;
  concluded: number;
  promoted: number;
  /** Experiments whose move failed this pass (each logged by the caller; the others went on). */
  failed: { experiment: string; error: string }[];
}

const TICK_ACTOR: Actor = { kind: 'system', name: 'experiment tick' };

async function analyseRunning(c: Queryable, e: ExperimentRow, now: Date, analyseOne: AnalyseOne, result: ExperimentTickResult): Promise<void> {
  const arms = await armsOf(c, e.workspace_id, e.id);
  const analysis = await analyseOne(c, e, arms, now);
  result.analysed++;
  // Its end, or its campaign's: an archived campaign shows no banner, so nothing more is measured.
  const archived = (await getCampaign(c, e.workspace_id, e.campaign_id))?.status === 'archived';
  const ended = (e.end_time !== null && e.end_time <= now) || archived;
  if (analysis.decision.status !== 'winner' && !ended) return;
  const done = await concludeExperiment(c, e.workspace_id, e.id, arms, analysis, now);
  if (!done) return;
  result.concluded++;
  const winner = arms.find((a) => a.id === done.winner_arm_id);
  // An A/A experiment's winner is a false one by construction (its arms show one banner), and an archived
  // campaign is final (as for a person's promotion, states.ts): neither is promoted.
  if (!winner || !done.auto_promote || done.mode !== 'ab' || archived) return;
  if (!(await promoteArm(c, e.workspace_id, e.id, winner, now))) return;
  // The promotion changes every sender's banner: the trail names the tick, as a person's promotion names them.
  await recordAudit(c, e.workspace_id, TICK_ACTOR, {
    action: 'experiment.promote',
    targetKind: 'experiment',
    target: e.id,
    details: { arm_id: winner.id, automatic: true },
  });
  result.promoted++;
}

export async function runExperimentTick(pool: pg.Pool, now: Date, analyseOne: AnalyseOne): Promise<ExperimentTickResult> {
  const result: ExperimentTickResult = { started: 0, analysed: 0, concluded: 0, promoted: 0, failed: [] };
  // One transaction per experiment; one that fails (its counts, its analysis) is recorded and the pass
  // goes on, so no other experiment waits for it. It is tried again at the next tick.
  const each = async (id: string, move: (c: Queryable) => Promise<void>) => {
    try {
      await withTx(pool, move);
    } catch (err) {
      result.failed.push({ experiment: id, error: err instanceof Error ? err.message : String(err) });
    }
  };
  for (const ws of await workspacesWithLiveExperiments(pool, now)) {
    const { due, running } = await liveExperiments(pool, ws, now);
    for (const d of due) {
      await each(d.id, async (c) => {
        const e = await getExperiment(c, ws, d.id, true);
        if (!e || e.status !== 'draft' || (await startProblem(c, e, now))) return;
        if (await startExperiment(c, ws, e.id, now)) result.started++;
      });
    }
    for (const r of running) {
      await each(r.id, async (c) => {
        const e = await getExperiment(c, ws, r.id, true);
        if (e?.status === 'running') await analyseRunning(c, e, now, analyseOne, result);
      });
    }
  }
  return result;
}
