/** `npm run bench -- experiments`: the simulated experiments' figures, and the Wilson interval it prints them with. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { reference, wilson } from '../../bench/experiments.ts';
import { HEAVY_TEST_MS, runProcess } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

interface BenchLine {
  aa: { experiments: number; false_winners: number; false_winner_rate: number; wilson_95: { low: number; high: number } };
  ab: { experiments: number; correct_winners: number; wrong_winners: number; undecided: number };
  met: Record<string, boolean>;
}

describe('npm run bench -- experiments', () => {
  it(
    'simulates A/A and A/B experiments peeked daily and prints the figures with their goals as one JSON line',
    async () => {
      const r = await runProcess('npm', ['run', '-s', 'bench', '--', 'experiments', '--quick'], { cwd: ROOT, timeoutMs: HEAVY_TEST_MS });
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as BenchLine;
      expect(out).toMatchObject({
        scenario: 'experiments',
        goal: { aa_false_winner_rate: 0.05, aa_false_winner_rate_stretch: 0.03, ab_median_exposures_per_arm: 7800, ab_wrong_winner_rate: 0.01 },
        met: {
          aa_false_winner_rate: expect.any(Boolean),
          aa_false_winner_rate_stretch: expect.any(Boolean),
          ab_median_exposures_per_arm: expect.any(Boolean),
          ab_wrong_winner_rate: expect.any(Boolean),
        },
        cpu_s: expect.any(Number),
        deadline_s: 600,
      });
      expect(out.aa.experiments).toBe(100);
      expect(out.ab.experiments).toBe(50);
      // The seeded run: identical banners rarely get a winner, and a +50% banner never loses to its control.
      expect(out.aa.false_winner_rate).toBe(out.aa.false_winners / 100);
      expect(out.aa.wilson_95.low).toBeLessThanOrEqual(out.aa.false_winner_rate);
      expect(out.aa.wilson_95.high).toBeGreaterThanOrEqual(out.aa.false_winner_rate);
      expect(out.met.aa_false_winner_rate).toBe(true);
      expect(out.ab.wrong_winners).toBe(0);
      expect(out.ab.correct_winners).toBeGreaterThan(10);
      expect(out.ab.correct_winners + out.ab.wrong_winners + out.ab.undecided).toBe(50);
    },
    HEAVY_TEST_MS,
  );

  it("prints the false-winner rate with Wilson's 95% interval", () => {
    const w = wilson(14, 1000);
    expect(w.low).toBeCloseTo(0.00835, 4);
    expect(w.high).toBeCloseTo(0.02336, 4);
    expect(wilson(0, 50)).toEqual({ low: 0, high: expect.closeTo(0.0713, 4) });
  });
});

describe('the reference figures of the experiments benchmark', () => {
  it('gives the fixed horizon for +50% at 0.5% (about 15,600 per arm) and the median of the sequential test that knows the effect', () => {
    expect(reference(0.005, 0.0075)).toEqual({
      fixed_horizon_80: 15_596,
      oracle_sprt_median_one_direction: 8999,
      oracle_sprt_median_either_direction: 11_604,
      ceiling_correct_by_goal_either_direction: 0.509,
      ceiling_correct_by_goal_challenger_only: 0.632,
    });
    // A larger effect needs fewer.
    expect(reference(0.005, 0.01).oracle_sprt_median_either_direction).toBeLessThan(5000);
  });

  it('gives the most any rule can reach by the goal: the power of one test at 7,800 per arm, at α/2 (either arm may win) or α', () => {
    // By hand: k·√7800 = 0.0025 / √(0.005·0.995 + 0.0075·0.9925) · √7800 = 1.9811; Φ(1.9811 − 1.9600) = 0.5084, Φ(1.9811 − 1.6449) = 0.6316.
    const k = 0.0025 / Math.sqrt(0.005 * 0.995 + 0.0075 * 0.9925);
    expect(k * Math.sqrt(7800)).toBeCloseTo(1.9811, 3);
    const r = reference(0.005, 0.0075);
    expect(r.ceiling_correct_by_goal_either_direction).toBeCloseTo(0.5084, 2);
    expect(r.ceiling_correct_by_goal_challenger_only).toBeCloseTo(0.6316, 2);
    // At half the goal the ceiling is Φ(1.4008 − 1.96) = 0.288: no rule has a median there.
    expect(reference(0.005, 0.0075, 0.05, 3900).ceiling_correct_by_goal_either_direction).toBeCloseTo(0.288, 2);
  });
});
