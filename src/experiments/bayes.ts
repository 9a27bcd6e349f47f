/**
 * The Bayesian half of the experiment analysis: the Beta prior fitted from the workspace's past
 * banners (empirical Bayes, method of moments), each arm's posterior with the senders' cluster
 * effect taken out (effective counts = counts ÷ design effect), and from the posteriors each arm's
 * chance to have the highest rate and the expected loss of choosing it (GrowthBook's "chance to
 * win" and "risk"). Computed on a grid, not by sampling, so the same data always gives the same
 * figures. Pure: no database, no I/O.
 */

export interface BetaPrior {
  alpha: number;
  beta: number;
  from_banners: number;
}

/** The prior when the workspace has fewer than MIN_BANNERS usable past banners: a 1% rate worth 50 exposures. */
export const WEAK_PRIOR = { alpha: 0.5, beta: 49.5 };
/** Past banners needed to fit a prior, and the exposures a banner needs to count. */
export const MIN_BANNERS = 3;
export const MIN_BANNER_EXPOSURES = 200;
/**
 * Bounds of the fitted prior's weight (alpha + beta, in exposures). At most 1,000: when past banners
 * all had nearly the same rate, a new banner still speaks for itself after a few thousand exposures.
 */
export const PRIOR_WEIGHT_MIN = 2;
export const PRIOR_WEIGHT_MAX = 1000;

/**
 * Method of moments on the past banners' rates: the mean m of their rates, and the spread between
 * banners, their rates' variance minus what binomial noise alone gives (m(1 − m) · mean(1/nᵢ)).
 * A Beta of mean m and that variance has weight m(1 − m)/variance − 1 (bounded above).
 */
export function fitPrior(past: readonly { exposures: number; clicks: number }[]): BetaPrior {
  const usable = past.filter((b) => b.exposures >= MIN_BANNER_EXPOSURES);
  const fallback = { ...WEAK_PRIOR, from_banners: 0 };
  if (usable.length < MIN_BANNERS) return fallback;
  const rates = usable.map((b) => b.clicks / b.exposures);
  const m = rates.reduce((a, r) => a + r, 0) / rates.length;
  if (!(m > 0 && m < 1)) return fallback;
  const spread = rates.reduce((a, r) => a + (r - m) ** 2, 0) / (rates.length - 1);
  const noise = (m * (1 - m) * usable.reduce((a, b) => a + 1 / b.exposures, 0)) / usable.length;
  const between = spread - noise;
  const weight = between > 0 ? Math.min(PRIOR_WEIGHT_MAX, Math.max(PRIOR_WEIGHT_MIN, (m * (1 - m)) / between - 1)) : PRIOR_WEIGHT_MAX;
  return { alpha: m * weight, beta: (1 - m) * weight, from_banners: usable.length };
}

export interface Posterior {
  a: number;
  b: number;
}

/** An arm's posterior: the prior plus its clicks and non-clicks, each divided by the design effect. */
export function posterior(prior: BetaPrior, exposures: number, clicks: number, designEffect: number): Posterior {
  const d = Math.max(1, designEffect);
  return { a: prior.alpha + clicks / d, b: prior.beta + (exposures - clicks) / d };
}

const GRID = 512;

/** Each posterior's mass on the cells of one shared grid over [low, high] (normalised numerically). */
function masses(posts: readonly Posterior[]): { xs: number[]; ws: number[][] } {
  let low = 1;
  let high = 0;
  for (const { a, b } of posts) {
    const mean = a / (a + b);
    const sd = Math.sqrt((a * b) / ((a + b) ** 2 * (a + b + 1)));
    low = Math.min(low, Math.max(0, mean - 10 * sd));
    high = Math.max(high, Math.min(1, mean + 10 * sd));
  }
  const step = (high - low) / GRID;
  const xs = Array.from({ length: GRID }, (_, k) => low + (k + 0.5) * step);
  const ws = posts.map(({ a, b }) => {
    const logs = xs.map((x) => (a - 1) * Math.log(x) + (b - 1) * Math.log1p(-x));
    const top = Math.max(...logs);
    const raw = logs.map((l) => Math.exp(l - top));
    const sum = raw.reduce((s, w) => s + w, 0);
    return raw.map((w) => w / sum);
  });
  return { xs, ws };
}

/**
 * For each arm: the posterior chance that its rate is the highest, and the expected loss of choosing
 * it, E[max_j p_j − p_i], divided by the control's (arm 0's) posterior mean rate.
 */
export function chanceAndLoss(posts: readonly Posterior[]): { chance: number[]; loss: number[] } {
  const { xs, ws } = masses(posts);
  const k = posts.length;
  // below[j][c]: arm j's mass in the cells before c (plus half of cell c: ties split evenly).
  const below = ws.map((w) => {
    let run = 0;
    return w.map((m) => {
      const mid = run + m / 2;
      run += m;
      return mid;
    });
  });
  const chance = ws.map((w, i) => {
    let p = 0;
    for (let c = 0; c < GRID; c++) {
      let others = w[c]!;
      for (let j = 0; j < k; j++) if (j !== i) others *= below[j]![c]!;
      p += others;
    }
    return p;
  });
  // E[max]: the maximum's distribution function is the product of the arms' (at the cells' right edges).
  let expectedMax = 0;
  let previous = 0;
  const upTo = ws.map(() => 0);
  for (let c = 0; c < GRID; c++) {
    let product = 1;
    for (let j = 0; j < k; j++) {
      upTo[j]! += ws[j]![c]!;
      product *= Math.min(1, upTo[j]!);
    }
    expectedMax += xs[c]! * (product - previous);
    previous = product;
  }
  const means = ws.map((w) => w.reduce((s, m, c) => s + m * xs[c]!, 0));
  const scale = means[0]! > 0 ? means[0]! : 1;
  const total = chance.reduce((s, p) => s + p, 0);
  return { chance: chance.map((p) => p / total), loss: means.map((m) => Math.max(0, expectedMax - m) / scale) };
}
