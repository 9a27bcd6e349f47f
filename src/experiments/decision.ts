/**
 * The decision of an experiment analysis, and the one plain sentence that says why. A winner needs
 * every condition at once: no sample-ratio mismatch; every arm past its minimum exposures and
 * clicks; the always-valid interval of its lift over the control above 0 (for the control as winner:
 * every other arm's interval below 0); its chance to be best at least probabilityToWin; its
 * expected loss under maxExpectedLoss. Pure.
 */
import type { Analysis, ArmInput, ArmResult, Policy } from './analysisTypes.ts';
import { exposuresToSeparate, type ArmVariance } from './sequential.ts';

interface Context {
  arms: readonly ArmInput[];
  results: readonly ArmResult[];
  stats: readonly ArmVariance[];
  srm: Analysis['srm'];
  /** What the sample-ratio test counted in each arm. */
  split: { unit: 'senders' | 'exposures'; counts: readonly number[] };
  policy: Policy;
  mode: Analysis['mode'];
  tau2: number;
  liftAlpha: number;
  priorMean: number;
}

type Outcome = Pick<Analysis, 'decision' | 'exposures_needed_per_arm'>;

const count = (n: number) => Math.round(n).toLocaleString('en-US');
/** "about 2,300": two significant digits, never 0. */
const about = (n: number) => {
  const digits = Math.max(0, Math.floor(Math.log10(Math.max(1, n))) - 1);
  return count(Math.max(1, Math.round(n / 10 ** digits) * 10 ** digits));
};
const percent = (x: number) => `${(x * 100).toFixed(2)}%`;
const signed = (x: number) => {
  const p = x * 100;
  const text = Math.abs(p) >= 10 ? p.toFixed(0) : p.toFixed(1);
  return `${p > 0 ? '+' : p < 0 ? '−' : ''}${text.replace('-', '')}%`;
};

function splitReason(arms: readonly ArmInput[], split: Context['split']): string {
  const total = split.counts.reduce((a, b) => a + b, 0);
  const weight = arms.reduce((a, b) => a + b.weight, 0);
  const got = split.counts.map((n) => Math.round((100 * n) / total)).join('/');
  const asked = arms.map((a) => Math.round((100 * a.weight) / weight)).join('/');
  return `the split of ${split.unit} is ${got}, not ${asked} as asked: results are held until it is explained`;
}

/** The arm with the highest chance to be best (the first of equals). */
function candidateOf(results: readonly ArmResult[]): number {
  let best = 0;
  results.forEach((r, i) => {
    if (r.chance_to_win > results[best]!.chance_to_win) best = i;
  });
  return best;
}

/** The arm compared with the control for the interval: the candidate, or for the control the best other arm. */
function rivalOf(results: readonly ArmResult[], candidate: number): number {
  if (candidate > 0) return candidate;
  let best = 1;
  for (let i = 2; i < results.length; i++) if (results[i]!.rate > results[best]!.rate) best = i;
  return best;
}

function intervalClear(results: readonly ArmResult[], candidate: number): boolean {
  if (candidate > 0) return results[candidate]!.lift!.low > 0;
  return results.slice(1).every((r) => r.lift!.high < 0);
}

/** Exposures per arm (beyond what each has) for the minimums and for the interval to clear 0, if the rates hold. */
function exposuresNeeded(ctx: Context, candidate: number): number | null {
  const { stats, policy, results } = ctx;
  const rival = rivalOf(results, candidate);
  const a = stats[0]!;
  const b = stats[rival]!;
  let target = policy.minExposuresPerArm;
  for (const s of stats) target = Math.max(target, policy.minClicksPerArm / Math.max(s.rate, ctx.priorMean));
  if (!intervalClear(results, candidate)) {
    const d = b.rate - a.rate;
    const n = (a.exposures + b.exposures) / 2;
    const separate = exposuresToSeparate(d, a.variance + b.variance, n, ctx.tau2, ctx.liftAlpha);
    if (separate === null) return null;
    target = Math.max(target, separate);
  }
  return Math.max(0, Math.ceil(Math.max(...stats.map((s) => target - s.exposures))));
}

/** Why the candidate is not (yet) a winner: the first condition it misses, in the order a reader acts on. */
function missing(ctx: Context, candidate: number, needed: number | null): string | null {
  const { arms, results, policy } = ctx;
  const name = (i: number) => armLabel(arms[i]!);
  const shortExposures = results.map((r, i) => ({ i, short: policy.minExposuresPerArm - r.exposures })).sort((x, y) => y.short - x.short)[0]!;
  if (shortExposures.short > 0)
    return `${name(shortExposures.i)} needs about ${about(shortExposures.short)} more exposures (every arm needs ${count(policy.minExposuresPerArm)} before a winner)`;
  const shortClicks = results.map((r, i) => ({ i, short: policy.minClicksPerArm - r.clicks })).sort((x, y) => y.short - x.short)[0]!;
  if (shortClicks.short > 0)
    return `${name(shortClicks.i)} needs ${count(Math.ceil(shortClicks.short))} more clicks (every arm needs ${count(policy.minClicksPerArm)} before a winner)`;
  if (!intervalClear(results, candidate)) {
    const rival = rivalOf(results, candidate);
    const lift = results[rival]!.lift!;
    const more = needed === null ? 'no estimate of when a decision comes' : `about ${about(needed)} more exposures per arm are likely needed`;
    if (Math.abs(lift.estimate) < 1e-12) return `${name(rival)} and ${name(0)} have the same click rate so far (${percent(results[0]!.rate)}): ${more}`;
    return `${name(rival)} is at ${signed(lift.estimate)} against ${name(0)}, but its interval (${signed(lift.low)} to ${signed(lift.high)}) still includes no difference: ${more}`;
  }
  const r = results[candidate]!;
  if (r.chance_to_win < policy.probabilityToWin)
    return `${name(candidate)} has a ${chancePercent(r.chance_to_win)} chance to be best; a winner needs ${chancePercent(policy.probabilityToWin)}`;
  if (!(r.expected_loss < policy.maxExpectedLoss))
    return `choosing ${name(candidate)} could still cost ${share(r.expected_loss)} of ${name(0)}'s click rate; the limit is ${share(policy.maxExpectedLoss)}`;
  return null;
}

/** An arm as the reasons name it: `arm <name>`, or `arm <id>` for an arm given without a name. */
const armLabel = (arm: ArmInput) => `arm ${arm.name ?? arm.id}`;

function winnerReason(ctx: Context, w: number): string {
  const r = ctx.results[w]!;
  const label = armLabel(ctx.arms[w]!);
  if (w === 0) return `${label} wins: ${percent(r.rate)}, every other arm's interval is below it, a ${chancePercent(r.chance_to_win)} chance to be best`;
  const lift = r.lift!;
  return `${label} wins: ${percent(r.rate)} against ${percent(ctx.results[0]!.rate)} for ${armLabel(ctx.arms[0]!)} (${signed(lift.estimate)}, interval ${signed(lift.low)} to ${signed(lift.high)}), a ${chancePercent(r.chance_to_win)} chance to be best`;
}

/** A chance as a percentage: whole points below 99%, two decimals above ("99.97%"), never rounded up to 100%. */
const chancePercent = (x: number) => (x < 0.99 ? `${Math.floor(x * 100)}%` : `${(Math.floor(x * 10_000) / 100).toFixed(2)}%`);
/** A share of the control's rate, two significant digits ("1.2%", "0.0011%"). */
const share = (x: number) => `${Number((x * 100).toPrecision(2))}%`;

const sentence = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}.`;

export function decide(ctx: Context): Outcome {
  const aa = ctx.mode === 'aa';
  if (ctx.srm.mismatch)
    return { decision: { status: 'halted', winner: null, reason: sentence(splitReason(ctx.arms, ctx.split)) }, exposures_needed_per_arm: null };
  const candidate = candidateOf(ctx.results);
  const needed = exposuresNeeded(ctx, candidate);
  const why = missing(ctx, candidate, needed);
  if (why === null) {
    const id = ctx.arms[candidate]!.id;
    const reason = aa
      ? `A/A check: ${armLabel(ctx.arms[candidate]!)} would have been declared the winner although every arm shows the same banner, a false winner`
      : winnerReason(ctx, candidate);
    return { decision: { status: 'winner', winner: id, reason: sentence(reason) }, exposures_needed_per_arm: 0 };
  }
  const reason = aa ? `A/A check: no (false) winner so far; ${why}` : why;
  return { decision: { status: 'no_winner_yet', winner: null, reason: sentence(reason) }, exposures_needed_per_arm: needed };
}
