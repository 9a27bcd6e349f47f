/**
 * What each experiment state accepts from users (the moves themselves are one conditional UPDATE
 * each, in src/experiments/experiments.ts):
 *
 * - start from draft only; stop from draft or running; promote from running, concluded or stopped,
 *   once. Any other state gets 422 invalid_experiment_state, its detail on `status` listing in
 *   `allowed` the states that accept the action;
 * - start needs a campaign that is not archived, no other experiment running on it (422
 *   experiment_already_running), an end not yet past (422 in_past on `experiment.end_time`), and in
 *   A/A mode a campaign banner for the arms without their own (422 campaign_incomplete);
 * - promoting the arm already promoted answers the experiment unchanged; another arm is 422
 *   already_promoted;
 * - promote needs an arm of the experiment (422 not_found on `arm_id`) and a campaign that can still
 *   be edited.
 */
import type { Queryable } from '../db/tx.ts';
import { ApiError, detail } from '../errors.ts';
import { assertEditable } from '../campaigns/states.ts';
import { getCampaign } from '../campaigns/queries.ts';
import { promoteArm, startExperiment, stopExperiment, type ExperimentRow, type ExperimentStatus } from './experiments.ts';
import { armsOf, getExperiment, runningExperimentOf } from './queries.ts';

export type ExperimentAction = 'start' | 'stop' | 'promote';

export const ACCEPTS: Record<ExperimentAction, readonly ExperimentStatus[]> = {
  start: ['draft'],
  stop: ['draft', 'running'],
  promote: ['running', 'concluded', 'stopped'],
};

const DONE: Record<ExperimentAction, string> = { start: 'started', stop: 'stopped', promote: 'promoted' };

function stateError(e: ExperimentRow, action: ExperimentAction): ApiError {
  const allowed = ACCEPTS[action];
  const message = `A ${e.status} experiment cannot be ${DONE[action]}.`;
  return new ApiError(422, 'invalid_request_error', 'invalid_experiment_state', message, {
    details: [detail('status', 'invalid_state', `${message} Allowed from: ${allowed.join(', ')}.`, { allowed: [...allowed] })],
  });
}

async function locked(db: Queryable, workspaceId: string, id: string, action: ExperimentAction): Promise<ExperimentRow> {
  const e = await getExperiment(db, workspaceId, id, true);
  if (!e) throw ApiError.notFound('experiment');
  if (!ACCEPTS[action].includes(e.status)) throw stateError(e, action);
  return e;
}

/** Why a draft cannot start now, or nothing (the tick skips drafts that cannot start). */
export async function startProblem(db: Queryable, e: ExperimentRow, now: Date): Promise<ApiError | undefined> {
  // The campaign's row locked: two starts on one campaign (a request and the tick) queue here, so the
  // second sees the first running and is refused, never a unique-index error.
  const campaign = await getCampaign(db, e.workspace_id, e.campaign_id, true);
  if (!campaign || campaign.status === 'archived') {
    return new ApiError(422, 'invalid_request_error', 'invalid_campaign_state', 'An experiment cannot start on an archived campaign.', {
      details: [detail('marketing_campaign.status', 'invalid_state', 'The campaign is archived.')],
    });
  }
  const running = await runningExperimentOf(db, e.workspace_id, e.campaign_id);
  if (running) {
    return new ApiError(422, 'invalid_request_error', 'experiment_already_running', `The campaign already runs the experiment ${running.id}; stop it first.`, {
      details: [detail('marketing_campaign', 'experiment_running', `One experiment runs per campaign; ${running.id} is running.`)],
    });
  }
  if (e.end_time && e.end_time <= now) return ApiError.validation([detail('experiment.end_time', 'in_past', 'The end time has passed.')]);
  const arms = await armsOf(db, e.workspace_id, e.id);
  if (!campaign.content && arms.some((a) => a.content === null)) {
    return new ApiError(422, 'invalid_request_error', 'campaign_incomplete', "Arms without their own banner show the campaign's, and the campaign has none.", {
      details: [detail('marketing_campaign.content', 'missing', "Set the campaign's content with PATCH /v1/marketing_campaigns/{id}.")],
    });
  }
  return undefined;
}

/** A user's start or stop, in the caller's transaction. 404 when there is no such experiment. */
export async function runExperimentAction(db: Queryable, workspaceId: string, id: string, action: 'start' | 'stop', now: Date): Promise<ExperimentRow> {
  const e = await locked(db, workspaceId, id, action);
  if (action === 'start') {
    const problem = await startProblem(db, e, now);
    if (problem) throw problem;
  }
  const moved = action === 'start' ? await startExperiment(db, workspaceId, id, now) : await stopExperiment(db, workspaceId, id, now);
  // The row is locked above, so the state cannot have changed in between.
  if (!moved) throw stateError(e, action);
  return moved;
}

/** A user's promotion of `armId`, in the caller's transaction. */
export async function runPromotion(db: Queryable, workspaceId: string, id: string, armId: string, now: Date): Promise<ExperimentRow> {
  const e = await locked(db, workspaceId, id, 'promote');
  // Promoting the arm promoted already changes nothing (a retried request is answered the same).
  if (e.promoted_arm_id && e.promoted_arm_id === armId.toLowerCase()) return e;
  if (e.promoted_arm_id) {
    throw new ApiError(422, 'invalid_request_error', 'already_promoted', `The arm ${e.promoted_arm_id} was promoted already.`, {
      details: [detail('arm_id', 'already_promoted', `An experiment promotes one arm, once; ${e.promoted_arm_id} was.`)],
    });
  }
  const arm = (await armsOf(db, workspaceId, id)).find((a) => a.id === armId.toLowerCase());
  if (!arm) throw ApiError.validation([detail('arm_id', 'not_found', 'No arm with this id in the experiment.')]);
  const campaign = await getCampaign(db, workspaceId, e.campaign_id, true);
  if (!campaign) throw ApiError.notFound('marketing campaign');
  assertEditable(campaign);
  const moved = await promoteArm(db, workspaceId, id, arm, now);
  if (!moved) throw stateError(e, 'promote');
  return moved;
}
