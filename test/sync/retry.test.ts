/**
 * Provider calls are retried with backoff, until the caller no longer wants the answer: once the
 * listing's signal is aborted (the run stopped), a failure is neither retried nor reported.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitedError, TransientError } from '../../connectors/types.ts';
import { withRetry } from '../../src/sync/retry.ts';

const FAST = { attempts: 4, baseDelayMs: 1, maxDelayMs: 5 };

function failingTwice() {
  let calls = 0;
  const fn = async () => {
    calls++;
    if (calls <= 2) throw new TransientError(`503 on call ${calls}`);
    return 'page';
  };
  return { fn, calls: () => calls };
}

describe('withRetry', () => {
  it('retries a transient failure and tells the observer', async () => {
    const f = failingTwice();
    const seen: number[] = [];
    await expect(withRetry(f.fn, FAST, { onTransient: (ms) => void seen.push(ms) })).resolves.toBe('page');
    expect(f.calls()).toBe(3);
    expect(seen).toHaveLength(2);
  });

  it('neither retries nor reports a failure once its signal is aborted', async () => {
    const f = failingTwice();
    const seen: number[] = [];
    const stop = new AbortController();
    stop.abort();
    await expect(withRetry(f.fn, FAST, { onTransient: (ms) => void seen.push(ms) }, stop.signal)).rejects.toThrow('503 on call 1');
    expect(f.calls()).toBe(1);
    expect(seen).toEqual([]);
  });

  it('ends a wait before the next attempt when its signal is aborted meanwhile (a worker stopping during a rate-limit wait)', async () => {
    const stop = new AbortController();
    let calls = 0;
    const fn = async () => {
      calls++;
      throw new RateLimitedError('429', 3_600_000);
    };
    // The provider asks for an hour; the policy allows an hour; the abort ends the wait.
    const waiting = withRetry(fn, { attempts: 4, baseDelayMs: 1, maxDelayMs: 3_600_000 }, { onRateLimited: () => stop.abort() }, stop.signal);
    await expect(waiting).rejects.toThrow('429');
    expect(calls).toBe(1);
  });
});
