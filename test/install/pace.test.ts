/**
 * The installs' pace is shared per integration through Postgres (src/installations/pace.ts): worker
 * processes (here: two pools, each its own connections) together keep to one rate; a configured
 * quota sets the first pace; a 429 pauses every process and lowers the pace.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceAccountKey } from '../connectors/google/helpers.ts';
import { createPool } from '../../src/db/pool.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { HEADROOM, currentPace, paceRateLimited, reserveTurn, type PaceKey } from '../../src/installations/pace.ts';
import { IntegrationSetupError, validateSetup } from '../../src/integrations/integrations.ts';
import { integrationUrlPolicy } from '../../src/integrations/urls.ts';
import { seedIntegration } from '../api/helpers.ts';
import { useTestContext } from '../helpers/db.ts';

const t = useTestContext();
let other: pg.Pool;
let ws: string;

beforeAll(async () => {
  // The project's pool: an error on a closing connection (the database is dropped after the file)
  // must not surface as an uncaught error.
  other = createPool(t.url, 10);
  ws = (await createWorkspace(t.ctx.pool, 'pace')).id;
});
afterAll(async () => {
  await other.end();
});

async function newIntegration(): Promise<PaceKey> {
  return { workspaceId: ws, integrationId: await seedIntegration(t.ctx.pool, ws, { category: 'signatures', name: `Gmail ${Math.random()}` }) };
}

/** The most turns that start within any one second. */
function busiestSecond(starts: Date[]): number {
  const ms = starts.map((d) => d.getTime()).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < ms.length; i++) {
    while (ms[i]! - ms[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** `n` reservations of one request each from one pool, `parallel` at a time. */
async function reserveMany(pool: pg.Pool, key: PaceKey, n: number, parallel: number, quotaPerSecond?: number) {
  const starts: Date[] = [];
  let left = n;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (left-- > 0) {
        const turn = await reserveTurn(pool, key, 1, { maxWaitMs: 60_000, quotaPerSecond });
        expect(turn.taken).toBe(true);
        starts.push(turn.startsAt);
      }
    }),
  );
  return starts;
}

describe('shared install pace', () => {
  it('two processes sharing one integration with a quota never start more requests in a second than the quota', async () => {
    const key = await newIntegration();
    const quota = 40;
    const [a, b] = await Promise.all([reserveMany(t.ctx.pool, key, 60, 8, quota), reserveMany(other, key, 60, 8, quota)]);
    const starts = [...a, ...b];
    expect(starts).toHaveLength(120);
    expect(busiestSecond(starts)).toBeLessThanOrEqual(quota);
    // Just under the quota, not far below it: turns 1 / (98% of 40/s) apart, never closer.
    const ms = starts.map((d) => d.getTime()).sort((x, y) => x - y);
    const gaps = ms.slice(1).map((v, i) => v - ms[i]!);
    const spacing = 1000 / (quota * HEADROOM);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(spacing - 1); // Date keeps milliseconds only
    const median = gaps.sort((x, y) => x - y)[Math.floor(gaps.length / 2)]!;
    expect(Math.abs(median - spacing)).toBeLessThanOrEqual(1);
    // The two processes took turns from one schedule: their turns interleave (how evenly depends
    // on how the machine schedules them, so only the overlap is asserted).
    const span = (x: Date[]) => [Math.min(...x.map(Number)), Math.max(...x.map(Number))] as const;
    const [[a0, a1], [b0, b1]] = [span(a), span(b)];
    expect(a0 < b1 && b0 < a1).toBe(true);
  });

  it('an install of several requests takes a turn as long as its requests', async () => {
    const key = await newIntegration();
    // 3 requests at 1/s: a 3 s turn, so the second reservation (asked right after, however busy the
    // machine) comes before it ends and starts exactly where it ends.
    const first = await reserveTurn(t.ctx.pool, key, 3, { maxWaitMs: 60_000, quotaPerSecond: 1 / HEADROOM });
    const second = await reserveTurn(other, key, 1, { maxWaitMs: 60_000, quotaPerSecond: 1 / HEADROOM });
    expect(second.startsAt.getTime() - first.startsAt.getTime()).toBeGreaterThanOrEqual(2999);
    expect(second.startsAt.getTime() - first.startsAt.getTime()).toBeLessThan(3020);
  });

  it('gives no turn further away than allowed, and reserves nothing then', async () => {
    const key = await newIntegration();
    await reserveMany(t.ctx.pool, key, 5, 1, 2); // 5 requests at ~2/s: the next turn is ~2.5 s away
    const far = await reserveTurn(other, key, 1, { maxWaitMs: 1000, quotaPerSecond: 2 });
    expect(far.taken).toBe(false);
    expect(far.waitMs).toBeGreaterThan(1000);
    const again = await reserveTurn(t.ctx.pool, key, 1, { maxWaitMs: 1000, quotaPerSecond: 2 });
    expect(again.taken).toBe(false);
    expect(Math.abs(again.startsAt.getTime() - far.startsAt.getTime())).toBeLessThan(5);
  });

  it('unpaced without a quota; a 429 pauses every process and sets the pace from the requests it refused', async () => {
    const key = await newIntegration();
    const starts = await reserveMany(t.ctx.pool, key, 50, 5);
    expect(busiestSecond(starts)).toBe(50); // no pace before the provider's first 429
    expect((await currentPace(t.ctx.pool, key))?.ratePerSecond).toBeNull();

    await paceRateLimited(other, key, 2000);
    const pace = (await currentPace(t.ctx.pool, key))!;
    // 50 requests over the last second were refused: 90% of them.
    expect(pace.ratePerSecond).toBeCloseTo(45, 0);
    expect(pace.ceilingPerSecond).toBeCloseTo(50, 0);
    // The rest of the burst changes nothing.
    await paceRateLimited(t.ctx.pool, key, 2000);
    expect((await currentPace(t.ctx.pool, key))!.ratePerSecond).toBe(pace.ratePerSecond);
    // The other process's next turn comes after the pause.
    const turn = await reserveTurn(t.ctx.pool, key, 1, { maxWaitMs: 5000 });
    expect(turn.taken).toBe(true);
    expect(turn.waitMs).toBeGreaterThan(1800);
  });

  it('with a configured quota, a 429 never raises the ceiling above it', async () => {
    const key = await newIntegration();
    await reserveMany(t.ctx.pool, key, 60, 6, 20); // 60 requests reserved within the last second, at 98% of 20/s ahead
    await paceRateLimited(other, key, 1000);
    const pace = (await currentPace(t.ctx.pool, key))!;
    expect(pace.ceilingPerSecond).toBe(20);
    expect(pace.ratePerSecond).toBeLessThanOrEqual(20 * HEADROOM);
  });

  it('a changed quota in the config starts the pace again from it', async () => {
    const key = await newIntegration();
    await reserveTurn(t.ctx.pool, key, 1, { maxWaitMs: 1000, quotaPerSecond: 10 });
    expect((await currentPace(t.ctx.pool, key))!.ratePerSecond).toBeCloseTo(10 * HEADROOM, 5);
    await reserveTurn(other, key, 1, { maxWaitMs: 1000, quotaPerSecond: 100 });
    expect((await currentPace(t.ctx.pool, key))!.ratePerSecond).toBeCloseTo(100 * HEADROOM, 5);
  });
});

describe('config quota_per_s', () => {
  const policy = () => integrationUrlPolicy(t.ctx.config);

  it('is accepted as a positive number of requests per second', () => {
    const { config } = validateSetup('google_workspace', 'signatures', serviceAccountKey(), { quota_per_s: 200 }, policy());
    expect(config.quota_per_s).toBe(200);
  });

  it.each([0, -5, 'fast'])('a bad value (%s) is refused, naming the field', (value) => {
    expect(() => validateSetup('google_workspace', 'signatures', serviceAccountKey(), { quota_per_s: value }, policy())).toThrow(IntegrationSetupError);
    expect(() => validateSetup('google_workspace', 'signatures', serviceAccountKey(), { quota_per_s: value }, policy())).toThrow(/config: quota_per_s: /);
  });
});
