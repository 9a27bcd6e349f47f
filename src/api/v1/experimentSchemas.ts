/** The experiments' request and response schemas (an extension; routes in ./experiments.ts). */
import { z } from 'zod';
import { DEFAULT_POLICY, type Analysis } from '../../experiments/analysis.ts';
import { EXPERIMENT_STATUSES, type ArmRow, type ExperimentRow } from '../../experiments/experiments.ts';
import { ContentTree, iso, isoRequired, Timestamp } from './schemas.ts';

const Interval = z.object({ low: z.number(), high: z.number() });

export const ExperimentResults = z
  .object({
    mode: z.enum(['ab', 'aa']),
    arms: z.array(
      z.object({
        id: z.string(),
        exposures: z.number(),
        clicks: z.number().describe("Human clicks on the arm's links"),
        senders: z.number().describe('Senders (teammates) the arm was shown for'),
        rate: z.number().describe('clicks / exposures (0 when none)'),
        interval: Interval.describe('Always-valid interval of the rate, senders as clusters'),
        lift: z
          .object({ estimate: z.number(), low: z.number(), high: z.number() })
          .nullable()
          .describe('Relative to the control (the first arm); null for the control'),
        chance_to_win: z.number().describe('Posterior probability that this arm has the highest rate'),
        expected_loss: z.number().describe("Posterior expected loss of choosing this arm, relative to the control's rate"),
      }),
    ),
    prior: z.object({ alpha: z.number(), beta: z.number(), from_banners: z.number() }),
    srm: z.object({ p_value: z.number(), mismatch: z.boolean() }).describe('Sample-ratio mismatch of the split against the weights'),
    decision: z.object({ status: z.enum(['winner', 'no_winner_yet', 'halted']), winner: z.string().nullable(), reason: z.string() }),
    exposures_needed_per_arm: z.number().nullable(),
  })
  .meta({ id: 'ExperimentResults' });

const PolicyRead = z
  .object({
    probability_to_win: z.number(),
    max_expected_loss: z.number(),
    min_exposures_per_arm: z.number(),
    min_clicks_per_arm: z.number(),
    alpha: z.number(),
  })
  .describe("The decision rule: the experiment's numbers, the build's defaults for those it does not set");

export const Arm = z
  .object({
    id: z.string(),
    name: z.string(),
    position: z.number().int().describe('0 is the control'),
    weight: z.number(),
    content: ContentTree.nullable().describe("The arm's banner; null in A/A mode shows the campaign's"),
  })
  .meta({ id: 'ExperimentArm' });

export const Experiment = z
  .object({
    id: z.string(),
    marketing_campaign_id: z.string(),
    name: z.string(),
    status: z.enum(EXPERIMENT_STATUSES),
    mode: z.enum(['ab', 'aa']),
    unit: z.literal('sender'),
    primary_metric: z.literal('human_ctr'),
    policy: PolicyRead,
    auto_promote: z.boolean(),
    start_time: Timestamp.nullable(),
    end_time: Timestamp.nullable(),
    started_at: Timestamp.nullable(),
    concluded_at: Timestamp.nullable(),
    winner_arm_id: z.string().nullable(),
    promoted_arm_id: z.string().nullable(),
    promoted_at: Timestamp.nullable(),
    arms: z.array(Arm),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Experiment' });

export const ExperimentWithResults = Experiment.extend({
  exposure: z.enum(['human_views', 'sender_days']).describe('What one exposure is for this workspace (docs/experiments.md, "Exposures")'),
  results: ExperimentResults,
}).meta({ id: 'ExperimentWithResults' });

const Probability = z.number().gt(0).lt(1);
const PolicyWrite = z.strictObject({
  probability_to_win: z.number().gt(0.5).lt(1).optional(),
  max_expected_loss: Probability.optional(),
  min_exposures_per_arm: z.number().int().min(0).max(100_000_000).optional(),
  min_clicks_per_arm: z.number().int().min(0).max(10_000_000).optional(),
  alpha: z.number().gt(0).lt(0.5).optional(),
});
const WriteTime = z.iso.datetime({ offset: true }).nullable().optional();
/** A name: shown in lists, reports and the CLI, so without control characters (C0, DEL, C1). */
const Name = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\x00-\x1f\x7f-\x9f]*$/, 'must not contain control characters');
const ArmWrite = z.strictObject({
  name: Name(100),
  weight: z.number().gt(0).max(1000).optional(),
  content: ContentTree.nullable().optional(),
});
export const ExperimentCreate = z.strictObject({
  experiment: z.strictObject({
    name: Name(200),
    mode: z.enum(['ab', 'aa']),
    arms: z.array(ArmWrite).min(2).max(4),
    auto_promote: z.boolean().optional(),
    start_time: WriteTime,
    end_time: WriteTime,
    policy: PolicyWrite.optional(),
  }),
});
export type ExperimentCreateBody = z.infer<typeof ExperimentCreate>['experiment'];
export const PromoteBody = z.strictObject({ arm_id: z.string().max(100) });

export function experimentView(e: ExperimentRow, arms: readonly ArmRow[]): z.infer<typeof Experiment> {
  return {
    id: e.id,
    marketing_campaign_id: e.campaign_id,
    name: e.name,
    status: e.status,
    mode: e.mode,
    unit: e.unit,
    primary_metric: e.primary_metric,
    policy: {
      probability_to_win: e.probability_to_win ?? DEFAULT_POLICY.probabilityToWin,
      max_expected_loss: e.max_expected_loss ?? DEFAULT_POLICY.maxExpectedLoss,
      min_exposures_per_arm: e.min_exposures_per_arm ?? DEFAULT_POLICY.minExposuresPerArm,
      min_clicks_per_arm: e.min_clicks_per_arm ?? DEFAULT_POLICY.minClicksPerArm,
      alpha: e.alpha ?? DEFAULT_POLICY.alpha,
    },
    auto_promote: e.auto_promote,
    start_time: iso(e.start_time),
    end_time: iso(e.end_time),
    started_at: iso(e.started_at),
    concluded_at: iso(e.concluded_at),
    winner_arm_id: e.winner_arm_id,
    promoted_arm_id: e.promoted_arm_id,
    promoted_at: iso(e.promoted_at),
    arms: arms.map((a) => ({ id: a.id, name: a.name, position: a.position, weight: a.weight, content: a.content })),
    created_at: isoRequired(e.created_at),
    updated_at: isoRequired(e.updated_at),
  };
}

/** The results as the API answers them (the contract's Analysis). */
export const resultsView = (a: Analysis): z.infer<typeof ExperimentResults> => a;
