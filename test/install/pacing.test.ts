/** Installs are paced per integration from the provider's 429s: 90% of the refused rate, then 1% more per quiet second. */
import { describe, expect, it } from 'vitest';
import { InstallPacer } from '../../src/install/pacing.ts';

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('InstallPacer', () => {
  it('measures only the sending since the last pause ended, and decreases once per burst of 429s', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    for (let i = 0; i < 40; i++) {
      c.advance(50);
      p.completed();
    }
    p.rateLimited(1000); // 20/s -> 18/s; paused for 1 s
    p.rateLimited(1000); // the same burst
    expect(p.installsPerSecond).toBeCloseTo(18, 5);
    c.advance(1000); // the pause ends; 10 installs in the next 0.5 s
    for (let i = 0; i < 10; i++) {
      c.advance(50);
      p.completed();
    }
    p.rateLimited(1000); // 20/s since the pause, not 10/2 s -> min(18.x, 20) * 0.9
    expect(p.installsPerSecond).toBeGreaterThan(16);
    c.advance(1100);
    p.completed();
    p.rateLimited(1000); // 100 ms of sending since the pause: too little to measure, unchanged
    expect(p.installsPerSecond).toBeGreaterThan(16);
  });

  it('does not pace before the first 429', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    for (let i = 0; i < 100; i++) expect(p.reserve()).toBe(0);
    expect(p.installsPerSecond).toBe(Infinity);
  });

  it('after a 429, spaces installs at 90% of the rate completed over the last two seconds', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    // 40 installs completed over two seconds: 20 per second.
    for (let i = 0; i < 40; i++) {
      c.advance(50);
      p.completed();
    }
    p.rateLimited(1000);
    expect(p.installsPerSecond).toBeCloseTo(18, 5);
    const waits = [p.reserve(), p.reserve(), p.reserve()];
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBeCloseTo(1000 / 18, 5);
    expect(waits[2]).toBeCloseTo(2000 / 18, 5);
  });

  it('gives no turn to a job that would wait longer than it may (it goes back to the queue)', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    for (let i = 0; i < 20; i++) {
      c.advance(100);
      p.completed();
    }
    p.rateLimited(1000); // 10/s -> 9/s: turns 111 ms apart
    expect(p.reserve(200)).toBe(0);
    expect(p.reserve(200)).toBeCloseTo(1000 / 9, 5);
    expect(p.reserve(200)).toBeCloseTo(2000 / 9, 5); // too far: not taken
    expect(p.reserve(200)).toBeCloseTo(2000 / 9, 5); // the same turn is still free
    c.advance(100);
    expect(p.reserve(200)).toBeCloseTo(2000 / 9 - 100, 5);
  });

  it('does not read idle time before a fan-out as slow sending', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    c.advance(1500); // idle
    for (let i = 0; i < 10; i++) {
      c.advance(50);
      p.completed();
    }
    p.rateLimited(1000); // 10 installs 50 ms apart: 20/s, not 10 per two seconds
    expect(p.installsPerSecond).toBeCloseTo(18, 5);
  });

  it('rises by 1% (at least one install per second) for each second without a 429', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    for (let i = 0; i < 400; i++) {
      c.advance(5);
      p.completed();
    }
    p.rateLimited(1000); // 200/s completed -> 180/s
    expect(p.installsPerSecond).toBeCloseTo(180, 5);
    c.advance(999);
    p.completed();
    expect(p.installsPerSecond).toBeCloseTo(180, 5);
    c.advance(1);
    p.completed();
    expect(p.installsPerSecond).toBeCloseTo(181.8, 5);
  });

  it('learns nothing from a 429 when it completed nothing lately (another process used the quota)', () => {
    const c = clock();
    const p = new InstallPacer(c.now);
    p.completed();
    c.advance(5000);
    p.rateLimited(1000);
    expect(p.installsPerSecond).toBe(Infinity);
  });
});
