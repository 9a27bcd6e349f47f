/**
 * Retry with backoff for provider calls. `rate_limited` waits what the provider's Retry-After says
 * (capped); `transient` backs off exponentially with jitter. Anything else is not retried here.
 * When the attempts run out, the error goes to the job runner, which retries the job later; the
 * sync resumes from its last checkpoint.
 */
import { ConnectorError, RateLimitedError } from '../../connectors/types.ts';

export interface RetryPolicy {
  /** Attempts per call, the first included. Default 6. */
  attempts: number;
  /** First transient backoff; doubles each time. Default 500 ms. */
  baseDelayMs: number;
  /** Longest single wait, whatever Retry-After says. Default 60 s. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseDelayMs: 500, maxDelayMs: 60_000 };

/** Waits `ms`, or less: until `signal` is aborted. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

export interface RetryObserver {
  onRateLimited?(waitMs: number): void | Promise<void>;
  onTransient?(waitMs: number, err: ConnectorError): void | Promise<void>;
}

/**
 * Calls `fn` until it succeeds or the policy gives up. Once `signal` is aborted (the caller no
 * longer wants the answer: a run that stopped, a worker that is stopping), a failure is not retried
 * and not reported to the observer, and a wait before the next attempt ends at once with the
 * failure that started it. Cancelling an attempt already made is the connector's part (its
 * requests carry the worker's signal, ConnectorContext.signal).
 */
export async function withRetry<T>(fn: () => Promise<T>, policy: RetryPolicy = DEFAULT_RETRY, observer: RetryObserver = {}, signal?: AbortSignal): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ConnectorError) || attempt >= policy.attempts || signal?.aborted) throw err;
      if (err instanceof RateLimitedError) {
        const wait = Math.min(err.retryAfterMs, policy.maxDelayMs);
        await observer.onRateLimited?.(wait);
        await sleep(wait, signal);
      } else if (err.code === 'transient') {
        const wait = Math.min(policy.baseDelayMs * 2 ** (attempt - 1) * (0.75 + Math.random() / 2), policy.maxDelayMs);
        await observer.onTransient?.(wait, err);
        await sleep(wait, signal);
      } else {
        throw err;
      }
      if (signal?.aborted) throw err;
    }
  }
}
