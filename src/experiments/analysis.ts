/**
 * The analysis of a banner experiment: for each arm its click rate with an always-valid interval,
 * its lift over the control, its chance to be best and the expected loss of choosing it; a
 * sample-ratio-mismatch check; and the decision, with one plain sentence saying why. Pure: the
 * caller reads the counts (human clicks only) and passes them in; docs/experiments.md ("Method")
 * explains each step and its references.
 *
 * Glossary. An exposure is one showing of an arm's banner (the caller decides what counts as one);
 * a click is a human click on it, so a sender's clicks never exceed its exposures. A sender is the
 * unit assigned to an arm, and a cluster: one sender's 40 clicks are not 40 independent people.
 * Arms come in their stable order; arms[0] is the control. Rates are clicks ÷ exposures.
 */
import { chanceAndLoss, fitPrior, posterior } from './bayes.ts';
import { decide } from './decision.ts';
import { armVariance, MIXTURE_RELATIVE_SCALE, mixtureHalfWidth, srmTest, type ArmVariance } from './sequential.ts';
import type { Analysis, ArmInput, ArmResult, PastBanner, Policy } from './analysisTypes.ts';

export type { Analysis, ArmInput, ArmResult, PastBanner, Policy, SenderCounts } from './analysisTypes.ts';

export const DEFAULT_POLICY: Policy = { probabilityToWin: 0.95, maxExpectedLoss: 0.01, minExposuresPerArm: 1000, minClicksPerArm: 10, alpha: 0.05 };

function checkInput(arms: readonly ArmInput[], past: readonly PastBanner[], p: Partial<Policy>): void {
  const bad = (field: string, why: string) => {
    throw new RangeError(`${field}: ${why}`);
  };
  if (arms.length < 2) bad('arms', 'an experiment has at least two arms');
  const ids = new Set<string>();
  arms.forEach((arm, i) => {
    if (ids.has(arm.id)) bad(`arms[${i}].id`, `"${arm.id}" appears twice`);
    ids.add(arm.id);
    if (!(arm.weight > 0) || !Number.isFinite(arm.weight)) bad(`arms[${i}].weight`, 'a positive number');
    const senders = new Set<string>();
    arm.senders.forEach((s, j) => {
      if (senders.has(s.sender)) bad(`arms[${i}].senders[${j}].sender`, `"${s.sender}" appears twice in the arm`);
      senders.add(s.sender);
      if (!Number.isFinite(s.exposures) || s.exposures < 0) bad(`arms[${i}].senders[${j}].exposures`, 'a number ≥ 0');
      if (!Number.isFinite(s.clicks) || s.clicks < 0 || s.clicks > s.exposures) bad(`arms[${i}].senders[${j}].clicks`, 'a number from 0 to the exposures');
    });
  });
  if (p.probabilityToWin !== undefined && !(p.probabilityToWin > 0 && p.probabilityToWin <= 1)) bad('policy.probabilityToWin', 'a number above 0, at most 1');
  if (p.maxExpectedLoss !== undefined && !(p.maxExpectedLoss >= 0 && Number.isFinite(p.maxExpectedLoss))) bad('policy.maxExpectedLoss', 'a number ≥ 0');
  if (p.minExposuresPerArm !== undefined && !(p.minExposuresPerArm >= 0 && Number.isFinite(p.minExposuresPerArm)))
    bad('policy.minExposuresPerArm', 'a number ≥ 0');
  if (p.minClicksPerArm !== undefined && !(p.minClicksPerArm >= 0 && Number.isFinite(p.minClicksPerArm))) bad('policy.minClicksPerArm', 'a number ≥ 0');
  if (p.alpha !== undefined && !(p.alpha > 0 && p.alpha < 1)) bad('policy.alpha', 'a number between 0 and 1');
  past.forEach((b, i) => {
    if (!Number.isFinite(b.exposures) || b.exposures < 0) bad(`past[${i}].exposures`, 'a number ≥ 0');
    if (!Number.isFinite(b.clicks) || b.clicks < 0 || b.clicks > b.exposures) bad(`past[${i}].clicks`, 'a number from 0 to the exposures');
  });
}

/**
 * What the sample-ratio test counts: senders, the unit assigned, when each sender is in one arm;
 * exposures when a sender appears in several arms (the add-in's per-message assignment, where each
 * message is assigned and one sender's messages spread over the arms by the weights).
 */
function splitUnit(arms: readonly ArmInput[]): 'senders' | 'exposures' {
  const seen = new Set<string>();
  for (const arm of arms) {
    const here = new Set(arm.senders.map((s) => s.sender));
    for (const id of here) {
      if (seen.has(id)) return 'exposures';
    }
    for (const id of here) seen.add(id);
  }
  return 'senders';
}

export function analyse(input: { arms: ArmInput[]; past: PastBanner[]; policy?: Partial<Policy>; mode: 'ab' | 'aa' }): Analysis {
  const { arms, past, mode } = input;
  checkInput(arms, past, input.policy ?? {});
  const policy: Policy = { ...DEFAULT_POLICY, ...input.policy };
  const prior = fitPrior(past);
  const priorMean = prior.alpha / (prior.alpha + prior.beta);
  const stats: ArmVariance[] = arms.map((arm) => armVariance(arm.senders, prior));
  const tau2 = (MIXTURE_RELATIVE_SCALE * priorMean) ** 2;
  // Each arm against the control: k − 1 comparisons share the error level (Bonferroni).
  const liftAlpha = policy.alpha / (arms.length - 1);
  const control = stats[0]!;
  const controlScale = control.rate > 0 ? control.rate : priorMean;
  const { chance, loss } = chanceAndLoss(stats.map((s) => posterior(prior, s.exposures, s.clicks, s.designEffect)));
  const results: ArmResult[] = arms.map((arm, i) => {
    const s = stats[i]!;
    const half = mixtureHalfWidth(s.variance, tau2, policy.alpha);
    let lift: ArmResult['lift'] = null;
    if (i > 0) {
      const d = s.rate - control.rate;
      const h = mixtureHalfWidth(s.variance + control.variance, tau2, liftAlpha);
      // No rate is below 0, so no arm is more than 100% below the control: the interval is cut there
      // (the decision reads only whether it excludes 0, which the cut never changes).
      lift = { estimate: d / controlScale, low: Math.max(-1, (d - h) / controlScale), high: Math.min(1e9, (d + h) / controlScale) };
    }
    return {
      id: arm.id,
      exposures: s.exposures,
      clicks: s.clicks,
      senders: s.senders,
      rate: s.rate,
      interval: { low: Math.max(0, s.rate - half), high: Math.min(1, s.rate + half) },
      lift,
      chance_to_win: chance[i]!,
      expected_loss: loss[i]!,
    };
  });
  const unit = splitUnit(arms);
  const split = arms.map((a, i) => (unit === 'senders' ? a.senders.length : stats[i]!.exposures));
  const srm = srmTest(
    split,
    arms.map((a) => a.weight),
  );
  const { decision, exposures_needed_per_arm } = decide({
    arms,
    results,
    stats,
    srm,
    split: { unit, counts: split },
    policy,
    mode,
    tau2,
    liftAlpha,
    priorMean,
  });
  return { mode, arms: results, prior, srm, decision, exposures_needed_per_arm };
}
