import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { analyse, DEFAULT_POLICY, type ArmInput, type PastBanner, type Policy, type SenderCounts } from '../../src/experiments/analysis.ts';
import { MIN_BANNER_EXPOSURES, MIN_BANNERS, PRIOR_WEIGHT_MAX, PRIOR_WEIGHT_MIN, WEAK_PRIOR } from '../../src/experiments/bayes.ts';
import { SRM_ALPHA, srmTest } from '../../src/experiments/sequential.ts';
import { random } from '../../bench/experiments.ts';

/** `n` senders with `each` exposures, the first `clicking` of them with one click each. */
const senders = (prefix: string, n: number, each: number, clicking: number): SenderCounts[] =>
  Array.from({ length: n }, (_, i) => ({ sender: `${prefix}-${i}`, exposures: each, clicks: i < clicking ? 1 : 0 }));
const arm = (id: string, list: SenderCounts[], weight = 1): ArmInput => ({ id, weight, senders: list });
/** Four past banners around 0.5%. */
const PAST: PastBanner[] = [
  { exposures: 10_000, clicks: 50 },
  { exposures: 8000, clicks: 45 },
  { exposures: 12_000, clicks: 55 },
  { exposures: 9000, clicks: 40 },
];
const run = (arms: ArmInput[], policy: Partial<Policy> = {}, past = PAST, mode: 'ab' | 'aa' = 'ab') => analyse({ arms, past, policy, mode });

/** 300 senders an arm, 50 exposures each (15,000): A 75 clicks (0.5%), B 150 (1.0%). Every condition holds. */
const clearWinner = () => [arm('A', senders('a', 300, 50, 75)), arm('B', senders('b', 300, 50, 150))];

/**
 * Simulated arms: `k` senders an arm, each with its own rate drawn from a Beta around the arm's
 * (`rates`), exposures arriving day by day; calls `look` after every day.
 */
function simulate(seed: number, rates: number[], days: number, look: (arms: ArmInput[]) => void, k = 150, perDay = 3) {
  const rng = random(seed);
  const world = rates.map((rate, a) =>
    Array.from({ length: k }, (_, i) => ({ sender: `s${a}-${i}`, rate: rng.beta(400 * rate, 400 * (1 - rate)), exposures: 0, clicks: 0 })),
  );
  for (let day = 0; day < days; day++) {
    for (const list of world)
      for (const s of list) {
        const e = rng.poisson(perDay);
        s.exposures += e;
        s.clicks += rng.binomial(e, s.rate);
      }
    look(
      world.map((list, a) =>
        arm(
          String.fromCharCode(65 + a),
          list.map(({ sender, exposures, clicks }) => ({ sender, exposures, clicks })),
        ),
      ),
    );
  }
}

describe('experiment analysis: the contract', () => {
  it('states its defaults', () => {
    expect(DEFAULT_POLICY).toEqual({ probabilityToWin: 0.95, maxExpectedLoss: 0.01, minExposuresPerArm: 1000, minClicksPerArm: 10, alpha: 0.05 });
  });

  it('reports each arm with its rate, interval, lift, chance and loss, and declares a clear winner with a plain reason', () => {
    const a = run(clearWinner());
    expect(a.mode).toBe('ab');
    expect(a.arms.map((r) => [r.id, r.exposures, r.clicks, r.senders, r.rate])).toEqual([
      ['A', 15_000, 75, 300, 0.005],
      ['B', 15_000, 150, 300, 0.01],
    ]);
    expect(a.arms[0]!.lift).toBeNull();
    expect(a.arms[1]!.lift!.estimate).toBeCloseTo(1, 10);
    for (const r of a.arms) expect(r.interval.low < r.rate && r.rate < r.interval.high).toBe(true);
    expect(a.arms[0]!.chance_to_win + a.arms[1]!.chance_to_win).toBeCloseTo(1, 6);
    expect(a.decision).toEqual({
      status: 'winner',
      winner: 'B',
      reason: 'Arm B wins: 1.00% against 0.50% for arm A (+100%, interval +40% to +160%), a 99.99% chance to be best.',
    });
    expect(a.exposures_needed_per_arm).toBe(0);
    expect(a.srm.mismatch).toBe(false);
  });

  it('refuses bad input, naming the field', () => {
    expect(() => run([arm('A', senders('a', 2, 10, 0))])).toThrow(/^arms: an experiment has at least two arms$/);
    expect(() => run([arm('A', senders('a', 2, 10, 0)), arm('A', senders('b', 2, 10, 0))])).toThrow(/^arms\[1\]\.id: "A" appears twice$/);
    expect(() => run([arm('A', senders('a', 2, 10, 0)), arm('B', senders('b', 2, 10, 0), 0)])).toThrow(/^arms\[1\]\.weight: /);
    expect(() => run([arm('A', [{ sender: 'x', exposures: 2, clicks: 3 }]), arm('B', [])])).toThrow(/^arms\[0\]\.senders\[0\]\.clicks: /);
    expect(() => run([arm('A', [{ sender: 'x', exposures: -1, clicks: 0 }]), arm('B', [])])).toThrow(/^arms\[0\]\.senders\[0\]\.exposures: /);
    expect(() => run([arm('A', []), arm('B', [])], {}, [{ exposures: Number.NaN, clicks: 0 }])).toThrow(/^past\[0\]\.exposures: /);
    expect(() =>
      run([
        arm('A', [
          { sender: 'x', exposures: 2, clicks: 0 },
          { sender: 'x', exposures: 2, clicks: 0 },
        ]),
        arm('B', []),
      ]),
    ).toThrow(/^arms\[0\]\.senders\[1\]\.sender: "x" appears twice in the arm$/);
    expect(() => run([arm('A', []), arm('B', [])], { alpha: 0 })).toThrow(/^policy\.alpha: a number between 0 and 1$/);
    expect(() => run([arm('A', []), arm('B', [])], { probabilityToWin: 1.5 })).toThrow(/^policy\.probabilityToWin: /);
    expect(() => run([arm('A', []), arm('B', [])], { minClicksPerArm: -1 })).toThrow(/^policy\.minClicksPerArm: /);
  });

  it('answers on empty arms without a winner', () => {
    const a = run([arm('A', []), arm('B', [])]);
    expect(a.decision.status).toBe('no_winner_yet');
    expect(a.decision.reason).toMatch(/^Arm A needs about 1,000 more exposures/);
    expect(a.arms.map((r) => r.rate)).toEqual([0, 0]);
  });
});

describe('experiment analysis: the always-valid intervals', () => {
  it('cover the true rates and lift at every daily look at once, in at least 95% of experiments', () => {
    // 200 experiments of 40 daily looks each; an interval that is only valid at one look (±1.96 σ) misses far more often.
    let missed = 0;
    let liftMissed = 0;
    for (let seed = 1; seed <= 200; seed++) {
      let miss = false;
      let liftMiss = false;
      simulate(seed, [0.01, 0.015], 40, (arms) => {
        const a = run(arms);
        if (a.arms[0]!.exposures === 0) return;
        const [ra, rb] = a.arms;
        if (ra!.interval.low > 0.01 || ra!.interval.high < 0.01) miss = true;
        if (rb!.interval.low > 0.015 || rb!.interval.high < 0.015) miss = true;
        const trueLift = (0.015 - 0.01) / ra!.rate;
        if (ra!.rate > 0 && (rb!.lift!.low > trueLift || rb!.lift!.high < trueLift)) liftMiss = true;
      });
      if (miss) missed++;
      if (liftMiss) liftMissed++;
    }
    expect(missed / 200).toBeLessThanOrEqual(0.05);
    expect(liftMissed / 200).toBeLessThanOrEqual(0.05);
  });

  it('A/A: identical banners rarely get a (false) winner, looking every day; the decision says so in A/A words', () => {
    let winners = 0;
    let reason = '';
    for (let seed = 1000; seed < 1200; seed++) {
      let won = false;
      simulate(seed, [0.01, 0.01], 40, (arms) => {
        const a = run(arms, {}, PAST, 'aa');
        if (a.decision.status === 'winner') won = true;
        else reason = a.decision.reason;
      });
      if (won) winners++;
    }
    expect(winners / 200).toBeLessThanOrEqual(0.05);
    expect(reason).toMatch(/^A\/A check: no \(false\) winner so far; /);
  });

  it('with three arms, shares the error level between the two comparisons (wider lift intervals)', () => {
    const two = run(clearWinner());
    const three = run([...clearWinner(), arm('C', senders('c', 300, 50, 80))]);
    expect(three.arms[1]!.lift!.high - three.arms[1]!.lift!.low).toBeGreaterThan(two.arms[1]!.lift!.high - two.arms[1]!.lift!.low);
  });
});

describe('experiment analysis: the decision needs every condition', () => {
  /** 300 senders an arm: A 0.5%, B 0.83%; a winner, with a 99.97% chance and an expected loss of about 0.001%. */
  const close = () => [arm('A', senders('a', 300, 50, 75)), arm('B', senders('b', 300, 50, 125))];
  /** 200 senders an arm: A 0.5%, B 0.8%; a 99.5% chance, but the interval of the lift still includes 0. */
  const early = () => [arm('A', senders('a', 200, 50, 50)), arm('B', senders('b', 200, 50, 80))];

  it('minimum exposures per arm', () => {
    const held = run(clearWinner(), { minExposuresPerArm: 20_000 });
    expect(held.decision).toEqual({
      status: 'no_winner_yet',
      winner: null,
      reason: 'Arm A needs about 5,000 more exposures (every arm needs 20,000 before a winner).',
    });
    expect(held.exposures_needed_per_arm).toBe(5000);
    expect(run(clearWinner(), { minExposuresPerArm: 15_000 }).decision.winner).toBe('B');
  });

  it('minimum clicks per arm', () => {
    const held = run(clearWinner(), { minClicksPerArm: 100 });
    expect(held.decision.reason).toBe('Arm A needs 25 more clicks (every arm needs 100 before a winner).');
    expect(held.decision.status).toBe('no_winner_yet');
    expect(held.exposures_needed_per_arm).toBe(5000);
    expect(run(clearWinner(), { minClicksPerArm: 75 }).decision.winner).toBe('B');
  });

  it("the always-valid interval of the winner's lift excludes 0", () => {
    const held = run(early());
    expect(held.arms[1]!.chance_to_win).toBeGreaterThan(0.95);
    expect(held.arms[1]!.expected_loss).toBeLessThan(0.01);
    expect(held.arms[1]!.lift!.low).toBeLessThan(0);
    expect(held.decision.status).toBe('no_winner_yet');
    expect(held.decision.reason).toMatch(
      /^Arm B is at \+60% against arm A, but its interval \(−\d+(\.\d)?% to \+\d+%\) still includes no difference: about [\d,]+ more exposures per arm are likely needed\.$/,
    );
    expect(held.exposures_needed_per_arm).toBeGreaterThan(0);
    // The same data with the interval's condition all but removed (a 10% interval).
    expect(run(early(), { alpha: 0.9 }).decision.winner).toBe('B');
  });

  it('the chance to be best', () => {
    const held = run(close(), { probabilityToWin: 0.9999 });
    expect(held.decision.reason).toBe('Arm B has a 99.97% chance to be best; a winner needs 99.99%.');
    expect(run(close()).decision.winner).toBe('B');
  });

  it('the expected loss', () => {
    const held = run(close(), { maxExpectedLoss: 1e-6 });
    expect(held.decision.reason).toMatch(/^Choosing arm B could still cost 0\.00\d+% of arm A's click rate; the limit is 0\.0001%\.$/);
    expect(run(close(), { maxExpectedLoss: 1e-3 }).decision.winner).toBe('B');
  });

  it('the control can win: every other arm below it', () => {
    const a = run([arm('A', senders('a', 300, 50, 150)), arm('B', senders('b', 300, 50, 75))]);
    expect(a.decision).toMatchObject({
      status: 'winner',
      winner: 'A',
      reason: expect.stringMatching(/^Arm A wins: 1\.00%, every other arm's interval is below it/),
    });
  });

  it('names the arms in its reasons by their names when given, by their ids otherwise', () => {
    const [a, b] = clearWinner();
    const named = run([
      { ...a!, name: 'Blue banner' },
      { ...b!, name: 'Green banner' },
    ]);
    expect(named.decision.reason).toMatch(/^Arm Green banner wins: .* for arm Blue banner \(/);
    expect(run([a!, b!]).decision.reason).toMatch(/^Arm B wins: .* for arm A \(/);
  });

  it('never puts an arm more than 100% below the control (the page once read -50,326.7%)', () => {
    const a = run([arm('A', senders('a', 20, 30, 3)), arm('B', senders('b', 20, 30, 0))]);
    expect(a.arms[1]!.lift!.estimate).toBe(-1);
    expect(a.arms[1]!.lift!.low).toBe(-1);
    expect(a.arms[1]!.lift!.high).toBeGreaterThan(0);
  });

  it('A/A mode: a winner is called a false winner', () => {
    expect(run(clearWinner(), {}, PAST, 'aa').decision).toEqual({
      status: 'winner',
      winner: 'B',
      reason: 'A/A check: arm B would have been declared the winner although every arm shows the same banner, a false winner.',
    });
  });
});

describe('experiment analysis: sample-ratio mismatch', () => {
  /** The clear winner's rates, with 366 senders in A and 234 in B (61/39) although 50/50 was asked. */
  const lopsided = (weights: [number, number]) => [arm('A', senders('a', 366, 50, 92), weights[0]), arm('B', senders('b', 234, 50, 117), weights[1])];

  it('halts the decision, saying what the split is and what was asked', () => {
    const a = run(lopsided([1, 1]));
    expect(a.srm.mismatch).toBe(true);
    expect(a.srm.p_value).toBeLessThan(0.001);
    expect(a.decision).toEqual({
      status: 'halted',
      winner: null,
      reason: 'The split of senders is 61/39, not 50/50 as asked: results are held until it is explained.',
    });
    expect(a.exposures_needed_per_arm).toBeNull();
    // The same split asked for (weights 61/39) is no mismatch, and the winner stands.
    const asked = run(lopsided([61, 39]));
    expect(asked.srm.mismatch).toBe(false);
    expect(asked.decision.winner).toBe('B');
  });

  it('does not cry wolf on splits that chance gives: checked after every one of 400 senders, in 300 experiments', () => {
    let alarms = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rng = random(seed);
      const counts = [0, 0];
      for (let i = 0; i < 400; i++) {
        counts[rng.uniform() < 0.5 ? 0 : 1]!++;
        if (srmTest(counts, [1, 1]).mismatch) {
          alarms++;
          break;
        }
      }
    }
    expect(alarms / 300).toBeLessThanOrEqual(0.01);
  });
});

describe('experiment analysis: the prior from past banners', () => {
  it('is fitted from the past banners (mean and spread), with a weak default when there are too few', () => {
    const fitted = run(clearWinner()).prior;
    expect(fitted.from_banners).toBe(4);
    expect(fitted.alpha / (fitted.alpha + fitted.beta)).toBeCloseTo((0.005 + 45 / 8000 + 55 / 12_000 + 40 / 9000) / 4, 6);
    const spread = run(clearWinner(), {}, [
      { exposures: 10_000, clicks: 20 },
      { exposures: 10_000, clicks: 60 },
      { exposures: 10_000, clicks: 120 },
      { exposures: 10_000, clicks: 40 },
    ]).prior;
    expect(spread.alpha + spread.beta).toBeLessThan(fitted.alpha + fitted.beta);
    expect(run(clearWinner(), {}, PAST.slice(0, 2)).prior).toEqual({ alpha: 0.5, beta: 49.5, from_banners: 0 });
    // A banner with too few exposures does not count.
    expect(run(clearWinner(), {}, [...PAST.slice(0, 2), { exposures: 50, clicks: 5 }]).prior.from_banners).toBe(0);
  });

  it('shrinks a young arm toward the past banners', () => {
    // 200 exposures an arm: A no click, B 2. Past banners that agree at 0.5% hold B's 1% back; no history barely does.
    const young = () => [arm('A', senders('a', 4, 50, 0)), arm('B', senders('b', 4, 50, 2))];
    const withHistory = run(young());
    const without = run(young(), {}, []);
    expect(withHistory.arms[1]!.chance_to_win).toBeGreaterThan(0.5);
    expect(withHistory.arms[1]!.chance_to_win).toBeLessThan(without.arms[1]!.chance_to_win - 0.1);
    const high = run(
      young(),
      {},
      PAST.map((b) => ({ exposures: b.exposures, clicks: b.clicks * 10 })),
    );
    expect(high.prior.alpha / (high.prior.alpha + high.prior.beta)).toBeCloseTo(
      10 * (withHistory.prior.alpha / (withHistory.prior.alpha + withHistory.prior.beta)),
      6,
    );
  });
});

describe('experiment analysis: senders are clusters', () => {
  it("one sender's 40 clicks do not declare where 40 senders with one click each do", () => {
    // 200 senders an arm with 50 exposures each; A: 20 clicks from 20 senders. B: the same 20, and 40 more.
    const control = () => arm('A', senders('a', 200, 50, 20));
    const spread = run([control(), arm('B', senders('b', 200, 50, 60))]);
    const one = senders('b', 200, 50, 20);
    one[100] = { sender: 'b-100', exposures: 50, clicks: 40 };
    const clustered = run([control(), arm('B', one)]);
    expect(spread.arms[1]!.clicks).toBe(60);
    expect(clustered.arms[1]!.clicks).toBe(60);
    expect(spread.decision.winner).toBe('B');
    expect(clustered.decision.status).toBe('no_winner_yet');
    expect(clustered.arms[1]!.lift!.low).toBeLessThan(0);
    expect(clustered.arms[1]!.chance_to_win).toBeLessThan(spread.arms[1]!.chance_to_win);
  });
});

describe('experiment analysis: exposures a decision needs', () => {
  /** `k` senders an arm, 50 exposures each: in A one sender in 4 clicks once (0.5%), in B two in 5 (0.8%). */
  const arms = (k: number) => [
    arm(
      'A',
      Array.from({ length: k }, (_, i) => ({ sender: `a-${i}`, exposures: 50, clicks: i % 4 === 0 ? 1 : 0 })),
    ),
    arm(
      'B',
      Array.from({ length: k }, (_, i) => ({ sender: `b-${i}`, exposures: 50, clicks: i % 5 < 2 ? 1 : 0 })),
    ),
  ];

  it('is about how many more exposures the same rates need to decide', () => {
    const now = run(arms(200));
    expect(now.decision.status).toBe('no_winner_yet');
    const needed = now.exposures_needed_per_arm!;
    expect(needed).toBeGreaterThan(0);
    const sendersFor = (exposures: number) => Math.ceil(exposures / 50 / 20) * 20;
    expect(run(arms(sendersFor(10_000 + needed * 1.1))).decision.winner).toBe('B');
    expect(run(arms(sendersFor(10_000 + needed * 0.5))).decision.status).toBe('no_winner_yet');
  });

  it('is null when the arms have the same rate so far, and says so', () => {
    const a = run([arm('A', senders('a', 200, 50, 50)), arm('B', senders('b', 200, 50, 50))]);
    expect(a.exposures_needed_per_arm).toBeNull();
    expect(a.decision.reason).toBe('Arm B and arm A have the same click rate so far (0.50%): no estimate of when a decision comes.');
  });
});

describe('experiment analysis: per-message assignment', () => {
  it('tests the split of exposures when the same senders are in every arm (each message assigned)', () => {
    // The same 100 senders in both arms, weights 70/30: their exposures split 70/30, the senders cannot.
    const each = (exposures: number) => Array.from({ length: 100 }, (_, i) => ({ sender: `s-${i}`, exposures, clicks: 0 }));
    const fine = run([arm('A', each(70), 70), arm('B', each(30), 30)]);
    expect(fine.srm.mismatch).toBe(false);
    const off = run([arm('A', each(50), 70), arm('B', each(50), 30)]);
    expect(off.decision).toMatchObject({
      status: 'halted',
      reason: 'The split of exposures is 50/50, not 70/30 as asked: results are held until it is explained.',
    });
  });
});

describe('docs/experiments.md', () => {
  it('states the defaults and thresholds the code uses', () => {
    const doc = fs.readFileSync(new URL('../../docs/experiments.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const n = (x: number) => x.toLocaleString('en-US');
    for (const phrase of [
      `minimum exposures [${n(DEFAULT_POLICY.minExposuresPerArm)}] and clicks [${DEFAULT_POLICY.minClicksPerArm}]`,
      `[α = ${DEFAULT_POLICY.alpha}]`,
      `\`probabilityToWin\` [${DEFAULT_POLICY.probabilityToWin}]`,
      `\`maxExpectedLoss\` [${DEFAULT_POLICY.maxExpectedLoss}, ${DEFAULT_POLICY.maxExpectedLoss * 100}% of the control's rate]`,
      `its level, ${SRM_ALPHA}, over a whole experiment`,
      `a weak Beta(${WEAK_PRIOR.alpha}, ${WEAK_PRIOR.beta})`,
      `at least ${n(MIN_BANNER_EXPOSURES)} exposures (at least ${MIN_BANNERS} of them)`,
      `kept between ${PRIOR_WEIGHT_MIN} and ${n(PRIOR_WEIGHT_MAX)}`,
    ])
      expect(doc).toContain(phrase);
  });
});
