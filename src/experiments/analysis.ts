/**
 * The analysis of an experiment: pure, no database and no I/O (the contract of issue #45).
 *
 * This build's version is the simplest honest one: plain rates, Wilson score intervals per arm,
 * lifts from the rates' ratio, chance_to_win 1 for the highest rate and 0 for the others, expected
 * loss as the gap to the best rate relative to the control's, and no decision ("no_winner_yet",
 * saying the statistics are not in this build). The method of docs/experiments.md replaces it.
 */

export interface SenderCounts {
  sender: string;
  exposures: number;
  clicks: number;
}
export interface ArmInput {
  id: string;
  weight: number;
  senders: SenderCounts[];
}
export interface PastBanner {
  exposures: number;
  clicks: number;
}
export interface Policy {
  probabilityToWin: number;
  maxExpectedLoss: number;
  minExposuresPerArm: number;
  minClicksPerArm: number;
  alpha: number;
}

export const DEFAULT_POLICY: Policy = { probabilityToWin: 0.95, maxExpectedLoss: 0.05, minExposuresPerArm: 1000, minClicksPerArm: 10, alpha: 0.05 };

export interface ArmResult {
  id: string;
  exposures: number;
  clicks: number;
  senders: number;
  rate: number;
  interval: { low: number; high: number };
  lift: { estimate: number; low: number; high: number } | null;
  chance_to_win: number;
  expected_loss: number;
}

export interface Analysis {
  mode: 'ab' | 'aa';
  arms: ArmResult[];
  prior: { alpha: number; beta: number; from_banners: number };
  srm: { p_value: number; mismatch: boolean };
  decision: { status: 'winner' | 'no_winner_yet' | 'halted'; winner: string | null; reason: string };
  exposures_needed_per_arm: number | null;
}

/** The Wilson score interval of `clicks` in `n` at the normal quantile `z`. */
function wilson(clicks: number, n: number, z: number): { low: number; high: number } {
  if (n <= 0) return { low: 0, high: 1 };
  // Sender-days can see more clicks than exposures: the interval is of a proportion, so at most 1.
  const p = Math.min(1, clicks / n);
  const denom = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denom;
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export function analyse(input: { arms: ArmInput[]; past: PastBanner[]; policy?: Partial<Policy>; mode: 'ab' | 'aa' }): Analysis {
  const z = 1.959964;
  const totals = input.arms.map((a) => ({
    id: a.id,
    exposures: a.senders.reduce((s, x) => s + x.exposures, 0),
    clicks: a.senders.reduce((s, x) => s + x.clicks, 0),
    senders: a.senders.length,
  }));
  const rates = totals.map((t) => (t.exposures > 0 ? t.clicks / t.exposures : 0));
  const best = Math.max(...rates);
  const bestIndex = rates.indexOf(best);
  const control = rates[0] ?? 0;
  const arms: ArmResult[] = totals.map((t, i) => {
    const interval = wilson(t.clicks, t.exposures, z);
    const c = wilson(totals[0]!.clicks, totals[0]!.exposures, z);
    const lift =
      i === 0 || control <= 0
        ? null
        : { estimate: rates[i]! / control - 1, low: c.high > 0 ? interval.low / c.high - 1 : -1, high: c.low > 0 ? interval.high / c.low - 1 : Number.MAX_VALUE };
    return {
      ...t,
      rate: rates[i]!,
      interval,
      lift,
      chance_to_win: i === bestIndex ? 1 : 0,
      expected_loss: control > 0 ? (best - rates[i]!) / control : 0,
    };
  });
  const pastExposures = input.past.reduce((s, p) => s + p.exposures, 0);
  const pastClicks = input.past.reduce((s, p) => s + p.clicks, 0);
  return {
    mode: input.mode,
    arms,
    prior: { alpha: 1 + pastClicks, beta: 1 + pastExposures - pastClicks, from_banners: input.past.length },
    srm: { p_value: 1, mismatch: false },
    decision: { status: 'no_winner_yet', winner: null, reason: 'the statistics are not in this build yet' },
    exposures_needed_per_arm: null,
  };
}
