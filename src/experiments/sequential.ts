/**
 * The frequentist half of the experiment analysis: sender-clustered variances, always-valid
 * (anytime) intervals and the sequential sample-ratio-mismatch test. Pure: no database, no I/O.
 *
 * Always-valid intervals: the normal-mixture confidence sequence (Robbins 1970; the mixture
 * sequential probability ratio test of Johari, Koomen, Pekelis, Walsh 2017 "Peeking at A/B tests";
 * Howard, Ramdas, McAuliffe, Sekhon 2021 "Time-uniform, nonparametric, nonasymptotic confidence
 * sequences"). For an estimate θ̂ with variance v and a normal mixing distribution of variance τ²
 * on the true value, the set of values whose mixture likelihood ratio stays under 1/α is
 *
 *   θ̂ ± sqrt( v · (1 + v/τ²) · (2·ln(1/α) + ln(1 + τ²/v)) )
 *
 * and it covers the true value at every look at once with probability ≥ 1 − α (Ville's
 * inequality), so looking every day does not inflate false winners. v is the sender-clustered
 * (delta-method) variance, as Eppo's and Statsig's sequential tests use a plug-in variance.
 */

/**
 * The scale of the lifts the always-valid intervals are tuned for, relative to the prior's mean
 * rate: the normal mixture's standard deviation is half that rate (a +50% lift). Banner tests in a
 * workspace of a few hundred senders can only ever tell lifts of that order apart; the intervals are
 * valid whatever the scale, which only moves where they are tightest.
 */
export const MIXTURE_RELATIVE_SCALE = 0.5;

/** Variance and counts of one arm's click rate, senders as clusters. */
export interface ArmVariance {
  exposures: number;
  clicks: number;
  senders: number;
  rate: number;
  /** The sender-clustered variance of the rate, never below the binomial variance of the smoothed rate. */
  variance: number;
  /** Clustered ÷ binomial variance (≥ 1): how much the senders' own rates widen the estimate. */
  designEffect: number;
}

/**
 * The click rate C/N of an arm and its variance with senders as clusters: the delta-method
 * (linearised ratio) variance K/(K−1) · Σ (cᵢ − p̂·nᵢ)² / N². With few clicks it can come out
 * near 0 (no sender clicked twice, or nobody clicked), so it is floored at the binomial variance
 * p̃(1 − p̃)/N of the rate smoothed by the Beta prior, p̃ = (α + C)/(α + β + N), which is never 0.
 */
export function armVariance(senders: readonly { exposures: number; clicks: number }[], prior: { alpha: number; beta: number }): ArmVariance {
  let exposures = 0;
  let clicks = 0;
  for (const s of senders) {
    exposures += s.exposures;
    clicks += s.clicks;
  }
  const k = senders.length;
  if (exposures === 0) return { exposures, clicks, senders: k, rate: 0, variance: Number.POSITIVE_INFINITY, designEffect: 1 };
  const rate = clicks / exposures;
  const smoothed = (prior.alpha + clicks) / (prior.alpha + prior.beta + exposures);
  let sum = 0;
  for (const s of senders) sum += (s.clicks - rate * s.exposures) ** 2;
  const clustered = k > 1 ? ((k / (k - 1)) * sum) / exposures ** 2 : 0;
  const binomial = (smoothed * (1 - smoothed)) / exposures;
  const variance = Math.max(clustered, binomial);
  return { exposures, clicks, senders: k, rate, variance, designEffect: variance / binomial };
}

/** Half-width of the normal-mixture always-valid interval for an estimate of variance `v`. */
export function mixtureHalfWidth(v: number, tau2: number, alpha: number): number {
  if (!Number.isFinite(v)) return Number.POSITIVE_INFINITY;
  if (v <= 0) return 0;
  return Math.sqrt(v * (1 + v / tau2) * (2 * Math.log(1 / alpha) + Math.log(1 + tau2 / v)));
}

/**
 * Exposures per arm at which a difference `d` would reach the boundary, if the rates stayed as they
 * are and the variance shrank as 1/exposures: the smallest N with |d| ≥ halfWidth(v·n/N), found by
 * bisection; null when there is no difference or it needs over a billion.
 */
export function exposuresToSeparate(d: number, v: number, n: number, tau2: number, alpha: number): number | null {
  if (!(Math.abs(d) > 0) || !(v > 0) || !Number.isFinite(v) || !(n > 0)) return null;
  const reached = (N: number) => Math.abs(d) >= mixtureHalfWidth((v * n) / N, tau2, alpha);
  let high = Math.max(n, 1);
  while (!reached(high)) {
    high *= 2;
    if (high > 1e9) return null;
  }
  let low = high / 2;
  if (reached(low)) return Math.ceil(low);
  while (high - low > 1) {
    const mid = (low + high) / 2;
    if (reached(mid)) high = mid;
    else low = mid;
  }
  return Math.ceil(high);
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: about 15 significant digits). */
export function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The Dirichlet prior's total weight in the sample-ratio test (Lindon & Malek use 100 × the expected shares). */
export const SRM_CONCENTRATION = 100;
/** The always-valid p-value under which the split is a mismatch. */
export const SRM_ALPHA = 0.001;

/**
 * Sequential sample-ratio-mismatch test of the senders' split against the weights (Lindon & Malek
 * 2022, "Anytime-valid inference for multinomial count data", the test Optimizely and Eppo run):
 * the Bayes factor of a Dirichlet-multinomial (centred on the weights) against the multinomial of
 * the weights; 1/BF is a p-value valid at every look, so a daily check does not cry wolf more often
 * than SRM_ALPHA over the whole experiment. The counts are of the unit assigned: senders (they split
 * by the weights exactly when assignment works, while their exposures also carry how much each one
 * happens to write), or exposures when each message is assigned.
 */
export function srmTest(counts: readonly number[], weights: readonly number[]): { p_value: number; mismatch: boolean } {
  const total = weights.reduce((a, b) => a + b, 0);
  const shares = weights.map((w) => w / total);
  const prior = shares.map((s) => SRM_CONCENTRATION * s);
  const n = counts.reduce((a, b) => a + b, 0);
  if (n === 0) return { p_value: 1, mismatch: false };
  const lnBeta = (xs: number[]) => xs.reduce((a, x) => a + lnGamma(x), 0) - lnGamma(xs.reduce((a, x) => a + x, 0));
  const lnBf = lnBeta(prior.map((a, i) => a + counts[i]!)) - lnBeta(prior) - counts.reduce((a, c, i) => a + c * Math.log(shares[i]!), 0);
  const p = Math.min(1, Math.exp(-lnBf));
  return { p_value: p, mismatch: p < SRM_ALPHA };
}
