import { describe, expect, it } from 'vitest';
import { assignArm, unitPoint } from '../../src/experiments/assignment.ts';

const ARMS = [
  { id: 'a', weight: 1 },
  { id: 'b', weight: 1 },
];

describe('experiment assignment', () => {
  it('gives a unit the same arm every time, whatever else was assigned before', () => {
    const first = Array.from({ length: 200 }, (_, i) => assignArm('exp-1', `t-${i}`, ARMS));
    const again = Array.from({ length: 200 }, (_, i) => assignArm('exp-1', `t-${199 - i}`, ARMS)).reverse();
    expect(again).toEqual(first);
  });

  it('splits by the weights, and people added later by the same weights', () => {
    const arms = [
      { id: 'a', weight: 3 },
      { id: 'b', weight: 1 },
    ];
    const count = (from: number, to: number) => {
      let a = 0;
      for (let i = from; i < to; i++) if (assignArm('exp-2', `t-${i}`, arms) === 'a') a++;
      return a / (to - from);
    };
    // 20,000 units: the share's standard error is 0.003, so 0.02 is over six of them.
    expect(Math.abs(count(0, 20_000) - 0.75)).toBeLessThan(0.02);
    expect(Math.abs(count(20_000, 40_000) - 0.75)).toBeLessThan(0.02);
  });

  it('assigns each experiment independently of the others', () => {
    let same = 0;
    for (let i = 0; i < 10_000; i++) if (assignArm('exp-x', `t-${i}`, ARMS) === assignArm('exp-y', `t-${i}`, ARMS)) same++;
    expect(Math.abs(same / 10_000 - 0.5)).toBeLessThan(0.03);
  });

  it('places units uniformly in [0, 1)', () => {
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 50_000; i++) {
      const p = unitPoint('exp-3', `t-${i}`);
      expect(p).toBeGreaterThanOrEqual(0);
      expect(p).toBeLessThan(1);
      buckets[Math.floor(p * 10)]!++;
    }
    for (const b of buckets) expect(Math.abs(b - 5000)).toBeLessThan(300);
  });

  it('refuses arms it cannot split between', () => {
    expect(() => assignArm('e', 't', [])).toThrow(/at least one arm/);
    expect(() => assignArm('e', 't', [{ id: 'a', weight: 0 }])).toThrow(/positive/);
  });
});
