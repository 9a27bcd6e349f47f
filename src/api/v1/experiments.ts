/**
 * Banner experiments (an extension beside the spec's campaigns; docs/experiments.md). The owner is
 * src/experiments/experiments.ts; what each state accepts: src/experiments/states.ts.
 *
 *   GET   /v1/marketing_campaigns/{id}/experiments   the campaign's experiments, paged, newest first
 *   POST  /v1/marketing_campaigns/{id}/experiments   {experiment: {name, mode, arms, ...}} -> 201, draft
 *   GET   /v1/experiments/{id}                       the experiment with `results` (the analysis now)
 *   POST  /v1/experiments/{id}/start                 draft -> running
 *   POST  /v1/experiments/{id}/stop                  draft | running -> stopped
 *   POST  /v1/experiments/{id}/promote               {arm_id}: the campaign continues with that arm's banner
 *
 * - Two to four arms, in their order (the first is the control), weights default 1. In `ab` mode
 *   every arm has a banner (`content`, validated as a campaign's); in `aa` mode an arm without one
 *   shows the campaign's. Arm names are unique within the experiment.
 * - `results` of a concluded experiment is the analysis it concluded on; otherwise the analysis of
 *   the counts now (src/analytics/experiments.ts), through the experiment's policy.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from '../../context.ts';
import type { Queryable } from '../../db/tx.ts';
import { ApiError, detail, type ValidationDetail } from '../../errors.ts';
import { getCampaign } from '../../campaigns/queries.ts';
import { createExperiment, type ArmRow, type ExperimentRow } from '../../experiments/experiments.ts';
import { armsOf, armsOfMany, getExperiment, listExperiments } from '../../experiments/queries.ts';
import { runExperimentAction, runPromotion } from '../../experiments/states.ts';
import { experimentResults, exposureKind } from '../../analytics/experiments.ts';
import { audited } from './audit.ts';
import { validateTrees } from './content.ts';
import { dataOf, errors, IdParams, PageQuery, pageOf, pageParams, paginate, pathId, type ZodV1 } from './schemas.ts';
import { Experiment, ExperimentCreate, experimentView, ExperimentWithResults, PromoteBody, type ExperimentCreateBody } from './experimentSchemas.ts';

/** The write checked: times, arm names, banners; answers the arms' validated trees. */
async function checkCreate(db: Queryable, workspaceId: string, x: ExperimentCreateBody): Promise<unknown[]> {
  const details: ValidationDetail[] = [];
  const start = x.start_time ? new Date(x.start_time) : null;
  const end = x.end_time ? new Date(x.end_time) : null;
  if (start && end && end <= start) details.push(detail('experiment.end_time', 'before_start', 'The end time must be after the start time.'));
  if (end && end <= new Date()) details.push(detail('experiment.end_time', 'in_past', 'The end time has passed.'));
  const seen = new Set<string>();
  x.arms.forEach((a, i) => {
    if (seen.has(a.name)) details.push(detail(`experiment.arms[${i}].name`, 'duplicate', 'Arm names are unique within an experiment.'));
    seen.add(a.name);
    if (x.mode === 'ab' && (a.content === undefined || a.content === null)) {
      details.push(detail(`experiment.arms[${i}].content`, 'missing', 'In ab mode every arm shows its own banner.'));
    }
    // An A/A test checks the method where there is no difference: every arm shows one banner.
    if (x.mode === 'aa' && i > 0 && JSON.stringify(a.content ?? null) !== JSON.stringify(x.arms[0]!.content ?? null)) {
      details.push(
        detail(
          `experiment.arms[${i}].content`,
          'differs',
          "In aa mode every arm shows the same banner: leave content out on every arm (the campaign's banner) or give each the first arm's.",
        ),
      );
    }
  });
  return validateTrees(
    db,
    workspaceId,
    x.arms.map((a, i) => [`experiment.arms[${i}].content`, a.content]),
    details,
  );
}

/**
 * Creates a draft experiment on a campaign from a create body, in the caller's transaction: the
 * campaign is locked and must not be archived, the body checked (the API route and `sigsync
 * experiment create` call it).
 */
export async function createFromBody(
  c: Queryable,
  workspaceId: string,
  campaignId: string,
  x: ExperimentCreateBody,
): Promise<{ experiment: ExperimentRow; arms: ArmRow[] }> {
  const campaign = await getCampaign(c, workspaceId, campaignId, true);
  if (!campaign) throw ApiError.notFound('marketing campaign');
  if (campaign.status === 'archived')
    throw ApiError.validation([detail('marketing_campaign.status', 'invalid_state', 'An archived campaign takes no experiment.')]);
  const trees = await checkCreate(c, workspaceId, x);
  return createExperiment(c, workspaceId, {
    campaignId,
    name: x.name,
    mode: x.mode,
    autoPromote: x.auto_promote,
    startTime: x.start_time ? new Date(x.start_time) : null,
    endTime: x.end_time ? new Date(x.end_time) : null,
    policy: {
      probabilityToWin: x.policy?.probability_to_win,
      maxExpectedLoss: x.policy?.max_expected_loss,
      minExposuresPerArm: x.policy?.min_exposures_per_arm,
      minClicksPerArm: x.policy?.min_clicks_per_arm,
      alpha: x.policy?.alpha,
    },
    arms: x.arms.map((a, i) => ({ name: a.name, weight: a.weight ?? 1, content: trees[i] ?? null })),
  });
}

/** The experiment with its results now (a concluded one: the analysis it concluded on). */
export async function withResults(db: Queryable, e: ExperimentRow) {
  const arms = await armsOf(db, e.workspace_id, e.id);
  // A concluded experiment answers the analysis it concluded on: nothing is counted again.
  if (e.status === 'concluded' && e.results) return { ...experimentView(e, arms), exposure: await exposureKind(db, e.workspace_id), results: e.results };
  const { counts, analysis } = await experimentResults(db, e, arms, new Date());
  return { ...experimentView(e, arms), exposure: counts.exposure, results: analysis };
}

export function experimentRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  campaignExperimentRoutes(r, app);
  oneExperimentRoutes(r, app);
}

/** A campaign's experiments: list, create. */
function campaignExperimentRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['experiments'];
  r.get(
    '/marketing_campaigns/:id/experiments',
    {
      schema: {
        tags,
        summary: "List a campaign's experiments (extension)",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: pageOf(Experiment), ...errors(401, 404, 422) },
      },
    },
    async (req) => {
      const campaignId = pathId(req.params.id, 'marketing campaign');
      if (!(await getCampaign(app.pool, req.workspaceId, campaignId))) throw ApiError.notFound('marketing campaign');
      const params = pageParams(req.query);
      const { rows, total } = await listExperiments(app.pool, req.workspaceId, campaignId, params);
      const arms = await armsOfMany(
        app.pool,
        req.workspaceId,
        rows.map((e) => e.id),
      );
      return paginate(
        rows.map((e) => experimentView(e, arms.get(e.id) ?? [])),
        params,
        total,
      );
    },
  );

  r.post(
    '/marketing_campaigns/:id/experiments',
    {
      schema: {
        tags,
        summary: 'Create an experiment (draft) (extension)',
        params: IdParams,
        body: ExperimentCreate,
        response: { 201: dataOf(Experiment), ...errors(401, 404, 422) },
      },
    },
    async (req, reply) => {
      const campaignId = pathId(req.params.id, 'marketing campaign');
      const x = req.body.experiment;
      const created = await audited(
        app,
        req,
        { action: 'experiment.create', targetKind: 'experiment', details: { marketing_campaign_id: campaignId } },
        async (c) => {
          const made = await createFromBody(c, req.workspaceId, campaignId, x);
          return { id: made.experiment.id, view: experimentView(made.experiment, made.arms) };
        },
      );
      return reply.status(201).send({ data: created.view });
    },
  );
}

/** One experiment: read it with its results, start, stop, promote. */
function oneExperimentRoutes(r: ZodV1, app: AppContext): void {
  const tags = ['experiments'];
  r.get(
    '/experiments/:id',
    {
      schema: {
        tags,
        summary: 'An experiment with its results (extension)',
        params: IdParams,
        response: { 200: dataOf(ExperimentWithResults), ...errors(401, 404) },
      },
    },
    async (req) => {
      const e = await getExperiment(app.pool, req.workspaceId, pathId(req.params.id, 'experiment'));
      if (!e) throw ApiError.notFound('experiment');
      return { data: await withResults(app.pool, e) };
    },
  );

  const action = (name: 'start' | 'stop', summary: string) =>
    r.post(
      `/experiments/:id/${name}`,
      { schema: { tags, summary, params: IdParams, response: { 200: dataOf(Experiment), ...errors(401, 404, 422) } } },
      async (req) => {
        const id = pathId(req.params.id, 'experiment');
        const e = await audited(app, req, { action: `experiment.${name}`, targetKind: 'experiment', target: id }, (c) =>
          runExperimentAction(c, req.workspaceId, id, name, new Date()),
        );
        return { data: experimentView(e, await armsOf(app.pool, req.workspaceId, id)) };
      },
    );
  action('start', "Start an experiment: each sender's signature shows its arm's banner (extension)");
  action('stop', "Stop an experiment: the campaign's banner shows again (extension)");

  r.post(
    '/experiments/:id/promote',
    {
      schema: {
        tags,
        summary: 'Promote an arm: the campaign continues with its banner (extension)',
        params: IdParams,
        body: PromoteBody,
        response: { 200: dataOf(Experiment), ...errors(401, 404, 422) },
      },
    },
    async (req) => {
      const id = pathId(req.params.id, 'experiment');
      const e = await audited(app, req, { action: 'experiment.promote', targetKind: 'experiment', target: id, details: { arm_id: req.body.arm_id } }, (c) =>
        runPromotion(c, req.workspaceId, id, req.body.arm_id, new Date()),
      );
      return { data: experimentView(e, await armsOf(app.pool, req.workspaceId, id)) };
    },
  );
}
