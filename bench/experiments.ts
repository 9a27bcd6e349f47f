/**
 * `experiments`: the experiment analysis (src/experiments/analysis.ts) on simulated experiments,
 * with the real assignment (src/experiments/assignment.ts), peeking after every day.
 *
 * The world: a workspace of `--senders` senders (default 400), each assigned to arm A or B by
 * assignArm. Every sender has an activity (exposures a day, gamma-distributed around 2.5) and a
 * click rate of their own, beta-distributed around their arm's rate (weight `--kappa`, default 400:
 * a sender's rate varies by about ±70% around the arm's). Each day every exposure is clicked by a
 * person with the sender's rate; on top, 30% of the senders write to people behind link scanners,
 * whose bots click 10% of those exposures, and the traffic classifier lets 1% of the bots' clicks
 * through as human (the analysis sees those: the caller passes human clicks only). The workspace
 * has 6 past banners around 0.5% (their rates ±30%), from which the prior is fitted.
 *
 * Peeking: after each day the analysis runs on the counts so far; the first winner ends the
 * experiment. An experiment runs at most `--days` days (default 60: about 30,000 exposures per arm).
 *
 *   A/A  (`--aa`, default 1,000 experiments): both arms at 0.5%. Goal: false-winner rate ≤ 5%
 *        (stretch goal ≤ 3%), printed with its Wilson 95% interval.
 *   A/B  (`--ab`, default 500 experiments): A at 0.5%, B at 0.75% (+50%). Goals: median exposures
 *        per arm to a correct decision ≤ 7,800 (an experiment that ends without one counts as never
 *        deciding), wrong-winner rate ≤ 1%.
 *
 *   npm run bench -- experiments [--quick] [--aa N] [--ab N] [--senders N] [--days N] [--kappa K] [--seed S]
 *
 * `--quick`: a tenth of the experiments. `ratio` is the A/B median over its goal (≤ 1 meets it);
 * `reference` is what that goal is measured against (see reference() below).
 */
import { analyse, type ArmInput, type PastBanner } from '../src/experiments/analysis.ts';
import { assignArm } from '../src/experiments/assignment.ts';
import { median, round } from './stats.ts';
import type { BenchArgs, Figures } from './types.ts';

export const GOALS = { aa_false_winner_rate: 0.05, aa_false_winner_rate_stretch: 0.03, ab_median_exposures_per_arm: 7800, ab_wrong_winner_rate: 0.01 };
const BASE_RATE = 0.005;
const LIFT = 0.5;
const ACTIVITY_MEAN = 2.5;
const ACTIVITY_SHAPE = 2;
const SCANNED_SHARE = 0.3;
const BOT_CLICK_RATE = 0.1;
const BOT_PASS_THROUGH = 0.01;

/** A seeded generator (mulberry32) with the draws the world needs. */
export function random(seed: number) {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
  /** Marsaglia and Tsang's method; shape < 1 through the boost x·U^(1/shape). */
  const gamma = (shape: number): number => {
    if (shape < 1) return gamma(shape + 1) * uniform() ** (1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      const x = normal();
      const v = (1 + c * x) ** 3;
      if (v > 0 && Math.log(1 - uniform()) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
    }
  };
  const beta = (a: number, b: number) => {
    const x = gamma(a);
    return x / (x + gamma(b));
  };
  const poisson = (lambda: number) => {
    const limit = Math.exp(-lambda);
    let k = 0;
    for (let p = uniform(); p > limit; p *= uniform()) k++;
    return k;
  };
  const binomial = (n: number, p: number) => {
    let k = 0;
    for (let i = 0; i < n; i++) if (uniform() < p) k++;
    return k;
  };
  return { uniform, gamma, beta, poisson, binomial };
}
type Random = ReturnType<typeof random>;

interface Sender {
  id: string;
  arm: number;
  activity: number;
  rate: number;
  botRate: number;
  exposures: number;
  clicks: number;
}

export interface WorldOptions {
  senders: number;
  days: number;
  kappa: number;
}

function pastBanners(rng: Random): PastBanner[] {
  return Array.from({ length: 6 }, () => {
    const rate = BASE_RATE * Math.exp(0.3 * (rng.uniform() * 2 - 1) * Math.sqrt(3));
    const exposures = 5000 + Math.floor(rng.uniform() * 15_000);
    return { exposures, clicks: rng.poisson(exposures * rate) };
  });
}

export interface Outcome {
  /** The arm declared the winner (0 = A, 1 = B), or null when none was by the last day. */
  winner: number | null;
  day: number | null;
  /** Mean exposures per arm when the winner was declared. */
  exposuresPerArm: number | null;
  halted: boolean;
}

/** One experiment: arm rates `rates` (A, B), peeked after every day until a winner or the last day. */
export function simulate(rng: Random, name: string, rates: [number, number], mode: 'aa' | 'ab', world: WorldOptions): Outcome {
  const weights = [
    { id: 'A', weight: 1 },
    { id: 'B', weight: 1 },
  ];
  const senders: Sender[] = Array.from({ length: world.senders }, (_, i) => {
    const id = `sender-${i}`;
    const arm = assignArm(name, id, weights) === 'A' ? 0 : 1;
    const mean = rates[arm]!;
    return {
      id,
      arm,
      activity: (rng.gamma(ACTIVITY_SHAPE) * ACTIVITY_MEAN) / ACTIVITY_SHAPE,
      rate: rng.beta(world.kappa * mean, world.kappa * (1 - mean)),
      botRate: rng.uniform() < SCANNED_SHARE ? BOT_CLICK_RATE : 0,
      exposures: 0,
      clicks: 0,
    };
  });
  const past = pastBanners(rng);
  let halted = false;
  for (let day = 1; day <= world.days; day++) {
    for (const s of senders) {
      const e = rng.poisson(s.activity);
      s.exposures += e;
      s.clicks += rng.binomial(e, s.rate) + (s.botRate ? rng.binomial(rng.binomial(e, s.botRate), BOT_PASS_THROUGH) : 0);
      s.clicks = Math.min(s.clicks, s.exposures);
    }
    const arms: ArmInput[] = weights.map((w, a) => ({
      ...w,
      senders: senders.filter((s) => s.arm === a).map((s) => ({ sender: s.id, exposures: s.exposures, clicks: s.clicks })),
    }));
    const result = analyse({ arms, past, mode });
    if (result.decision.status === 'halted') halted = true;
    if (result.decision.status === 'winner') {
      const winner = result.decision.winner === 'A' ? 0 : 1;
      return { winner, day, exposuresPerArm: (result.arms[0]!.exposures + result.arms[1]!.exposures) / 2, halted };
    }
  }
  return { winner: null, day: null, exposuresPerArm: null, halted };
}

/** Wilson's 95% interval of a proportion. */
export function wilson(successes: number, n: number): { low: number; high: number } {
  if (n === 0) return { low: 0, high: 1 };
  const z = 1.959963984540054;
  const p = successes / n;
  const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
  const half = (z / (1 + (z * z) / n)) * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/** The standard normal distribution function (Abramowitz and Stegun 7.1.26, error under 1.5e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/** The standard normal quantile, by bisection on normalCdf (to 1e-9: for the reference figures only). */
function normalQuantile(p: number): number {
  let low = -10;
  let high = 10;
  while (high - low > 1e-9) {
    const mid = (low + high) / 2;
    if (normalCdf(mid) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/**
 * What the goal is measured against, from the arms' rates alone (independent exposures, no senders,
 * no bots): the fixed horizon's exposures per arm for 80% power at a two-sided 5%, and the median
 * exposures per arm of the best sequential test there is for the true effect, the one-boundary
 * sequential probability ratio test that knows it in advance, watched after every exposure: it
 * stops when the likelihood ratio reaches 1/α (one direction) or 2/α (either direction). Its
 * log-likelihood ratio is a random walk with drift k²/2 and step variance k² per exposure
 * (k = difference ÷ sqrt(pₐ(1−pₐ) + p_b(1−p_b))), so its stopping time is inverse Gaussian.
 *
 * And the ceiling the median goal runs into: a median at `goal` exposures per arm needs a correct
 * winner by `goal` in at least half the experiments. Whether a rule has declared B by then depends
 * only on the data so far, so by the Neyman–Pearson lemma its chance is at most the power of the best
 * single test at `goal` whose false-positive rate is what the rule may spend on B: with both arms
 * able to win and at most α false winners in A/A, α/2 (a rule that only ever declares a challenger
 * may spend all of α). That power is Φ(k·√goal − z), z the normal quantile of 1 − α/2 (or 1 − α):
 * reached only by a rule that looks once, at exactly `goal`, and never decides at any other look.
 */
export function reference(pa: number, pb: number, alpha = 0.05, goal = GOALS.ab_median_exposures_per_arm) {
  const k = Math.abs(pb - pa) / Math.sqrt(pa * (1 - pa) + pb * (1 - pb));
  const medianStop = (bound: number) => {
    const a = Math.log(bound) / k;
    const mean = a / (k / 2);
    const shape = a * a;
    const cdf = (x: number) =>
      normalCdf(Math.sqrt(shape / x) * (x / mean - 1)) + Math.exp((2 * shape) / mean) * normalCdf(-Math.sqrt(shape / x) * (x / mean + 1));
    let low = 0;
    let high = mean * 10;
    for (let i = 0; i < 100; i++) {
      const mid = (low + high) / 2;
      if (cdf(mid) < 0.5) low = mid;
      else high = mid;
    }
    return Math.round(high);
  };
  return {
    fixed_horizon_80: Math.round(((1.959964 + 0.841621) / k) ** 2),
    oracle_sprt_median_one_direction: medianStop(1 / alpha),
    oracle_sprt_median_either_direction: medianStop(2 / alpha),
    ceiling_correct_by_goal_either_direction: round(normalCdf(k * Math.sqrt(goal) - normalQuantile(1 - alpha / 2)), 3),
    ceiling_correct_by_goal_challenger_only: round(normalCdf(k * Math.sqrt(goal) - normalQuantile(1 - alpha)), 3),
  };
}

const option = (options: BenchArgs['options'], key: string, fallback: number) => (options[key] === undefined ? fallback : Number(options[key]));

export async function experimentsScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const aaRuns = option(options, 'aa', quick ? 100 : 1000);
  const abRuns = option(options, 'ab', quick ? 50 : 500);
  const world: WorldOptions = { senders: option(options, 'senders', 400), days: option(options, 'days', 60), kappa: option(options, 'kappa', 400) };
  const seed = option(options, 'seed', 45);
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const rng = random(seed);
  let analyses = 0;
  const aa: Outcome[] = [];
  for (let i = 0; i < aaRuns; i++) {
    aa.push(simulate(rng, `aa-${seed}-${i}`, [BASE_RATE, BASE_RATE], 'aa', world));
    analyses += aa.at(-1)!.day ?? world.days;
    if ((i + 1) % Math.max(1, Math.floor(aaRuns / 4)) === 0)
      log(`A/A: ${i + 1} of ${aaRuns} experiments, ${aa.filter((o) => o.winner !== null).length} false winners`);
  }
  const ab: Outcome[] = [];
  for (let i = 0; i < abRuns; i++) {
    ab.push(simulate(rng, `ab-${seed}-${i}`, [BASE_RATE, BASE_RATE * (1 + LIFT)], 'ab', world));
    analyses += ab.at(-1)!.day ?? world.days;
    if ((i + 1) % Math.max(1, Math.floor(abRuns / 4)) === 0)
      log(`A/B: ${i + 1} of ${abRuns} experiments, ${ab.filter((o) => o.winner === 1).length} correct winners`);
  }
  const falseWinners = aa.filter((o) => o.winner !== null).length;
  const falseRate = falseWinners / Math.max(1, aaRuns);
  const correct = ab.filter((o) => o.winner === 1);
  const wrong = ab.filter((o) => o.winner === 0).length;
  const wrongRate = wrong / Math.max(1, abRuns);
  // Over every A/B experiment: one without a correct decision counts as never deciding (Infinity).
  const toDecision = ab.map((o) => (o.winner === 1 ? o.exposuresPerArm! : Number.POSITIVE_INFINITY));
  const medianAll = toDecision.length ? median(toDecision) : Number.POSITIVE_INFINITY;
  const cpu = process.cpuUsage(cpu0);
  const figures = {
    aa: {
      experiments: aaRuns,
      false_winners: falseWinners,
      false_winner_rate: round(falseRate, 4),
      wilson_95: mapRound(wilson(falseWinners, aaRuns)),
      halted: aa.filter((o) => o.halted).length,
    },
    ab: {
      experiments: abRuns,
      correct_winners: correct.length,
      wrong_winners: wrong,
      wrong_winner_rate: round(wrongRate, 4),
      wrong_wilson_95: mapRound(wilson(wrong, abRuns)),
      undecided: ab.filter((o) => o.winner === null).length,
      median_exposures_per_arm: Number.isFinite(medianAll) ? Math.round(medianAll) : null,
      median_exposures_per_arm_of_correct: correct.length ? Math.round(median(correct.map((o) => o.exposuresPerArm!))) : null,
      median_day_of_correct: correct.length ? median(correct.map((o) => o.day!)) : null,
      halted: ab.filter((o) => o.halted).length,
    },
    world: { ...world, base_rate: BASE_RATE, lift: LIFT, bot_pass_through: BOT_PASS_THROUGH, seed },
    reference: reference(BASE_RATE, BASE_RATE * (1 + LIFT)),
    goal: GOALS,
    met: {
      aa_false_winner_rate: falseRate <= GOALS.aa_false_winner_rate,
      aa_false_winner_rate_stretch: falseRate <= GOALS.aa_false_winner_rate_stretch,
      ab_median_exposures_per_arm: medianAll <= GOALS.ab_median_exposures_per_arm,
      ab_wrong_winner_rate: wrongRate <= GOALS.ab_wrong_winner_rate,
    },
    ratio: Number.isFinite(medianAll) ? round(medianAll / GOALS.ab_median_exposures_per_arm, 3) : null,
    analyses,
    cpu_s: round((cpu.user + cpu.system) / 1e6, 2),
    wall_s: round((performance.now() - started) / 1000, 2),
    deadline_s: option(options, 'deadline', quick ? 600 : 1800),
  };
  log(
    `A/A false winners ${falseWinners}/${aaRuns} (${(falseRate * 100).toFixed(1)}%); A/B median exposures per arm to a correct winner ${figures.ab.median_exposures_per_arm ?? 'not reached'}, wrong winners ${wrong}/${abRuns}`,
  );
  return figures;
}

function mapRound(x: { low: number; high: number }) {
  return { low: round(x.low, 4), high: round(x.high, 4) };
}
