/**
 * One attempt of one webhook delivery: a signed POST of the event payload, its outcome recorded, and
 * the next attempt scheduled or the delivery settled.
 *
 * - Body: the event payload exactly as stored (spec section 6 shape, with `type` and `occurred_at`),
 *   as minified JSON, `content-type: application/json`.
 * - Headers: Standard Webhooks `webhook-id` (the delivery id, stable across retries),
 *   `webhook-timestamp`, `webhook-signature` (signing.ts).
 * - Timeout: 10 s for the whole exchange. Redirects are not followed.
 * - Outcomes:
 *   - 2xx: succeeded; the endpoint's failure count resets to 0.
 *   - 408, 429, 5xx, timeout, network error (connection refused or reset, DNS failure): retried on
 *     RETRY_DELAYS_MS (about 24 h in all), a Retry-After header can lengthen the wait (up to 24 h);
 *     after the last attempt the delivery fails.
 *   - 410 Gone: failed, and the endpoint is disabled at once (the receiver says it wants no more).
 *   - any other status (3xx, 4xx), or an address refused by the SSRF guard: failed, no retry.
 * - Each attempt is a `webhook_delivery_attempts` row (status code, duration, error); the delivery row
 *   keeps the latest. A delivery that ends in failure adds one to the endpoint's
 *   `consecutive_failures`; at WEBHOOK_MAX_CONSECUTIVE_FAILURES the endpoint is disabled with a
 *   warning log line. Deliveries still pending for a disabled endpoint fail without a request.
 * - The next attempt is the same `deliver_webhook` job key re-added with `run_at`, in the transaction
 *   that records the attempt, so a crash never loses or doubles the schedule.
 */
import { STATUS_CODES } from 'node:http';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { eventPayload } from '../db/outbox.ts';
import { signatureHeaders } from './signing.ts';
import { checkUrlSyntax, guardedAgent, hostOf, refusalOf } from '../net/ssrf.ts';
import { failForDisabledEndpoint, recordAttempt } from './deliveries.ts';
import { recordEndpointFailure, recordEndpointSuccess } from './endpoints.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Wait before each retry. Ten attempts in all: at 0, 5 s, 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h and
 * 8 h after the previous one, so the last attempt comes about 23.6 h after the first (up to 10% more
 * with jitter).
 */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 8 * HOUR];

export interface DeliveryPolicy {
  /** Wait before retry n (n = 1 is the second attempt); attempts = length + 1. Default RETRY_DELAYS_MS. */
  retryDelaysMs: readonly number[];
  /** Random extra wait, as a fraction of the delay (0.1: up to 10% more). Default 0.1. */
  jitter: number;
  /** Deadline of one attempt, connect to last response byte. Default 10 s. */
  timeoutMs: number;
  /** The longest wait a Retry-After header may ask for. Default 24 h. */
  maxRetryAfterMs: number;
}

export const DEFAULT_POLICY: DeliveryPolicy = {
  retryDelaysMs: RETRY_DELAYS_MS,
  jitter: 0.1,
  timeoutMs: 10 * SECOND,
  maxRetryAfterMs: 24 * HOUR,
};

const USER_AGENT = 'sigsync-webhooks/1';
/** Response bytes read before the rest is dropped; the body is not used. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export class DeliveryTimeoutError extends Error {
  override readonly name = 'DeliveryTimeoutError';
}

/** What one HTTP attempt came to. */
export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  /** null on success; otherwise a short, secret-free description. */
  error: string | null;
  verdict: 'succeeded' | 'retry' | 'failed' | 'gone';
  /** From a Retry-After header on a retryable answer. */
  retryAfterMs?: number;
}

/** Status code → what to do. */
export function classifyStatus(status: number): AttemptResult['verdict'] {
  if (status >= 200 && status < 300) return 'succeeded';
  if (status === 408 || status === 429 || status >= 500) return 'retry';
  if (status === 410) return 'gone';
  return 'failed';
}

function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * SECOND;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

interface PostResponse {
  status: number;
  statusText: string;
  retryAfter: string | undefined;
}

async function post(url: URL, body: string, headers: Record<string, string>, allowInsecure: boolean, timeoutMs: number): Promise<PostResponse> {
  // A fresh connection per attempt, through the SSRF guard: the name is resolved and checked by the
  // socket's lookup, and the connected socket's address is checked again before the request is sent.
  const agent = guardedAgent({ allowInsecure }, { keepAlive: false });
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeliveryTimeoutError(`no complete response within ${timeoutMs} ms`)), timeoutMs);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': USER_AGENT },
      body,
      dispatcher: agent,
      signal: controller.signal,
    });
    // The status is known; a body cut short (by us or the receiver) does not change the outcome.
    let read = 0;
    try {
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_RESPONSE_BYTES) break;
      }
    } catch {
      // The receiver closed early, or the deadline passed while reading: the status stands.
    }
    res.body.destroy();
    const retryAfter = res.headers['retry-after'];
    return { status: res.statusCode, statusText: STATUS_CODES[res.statusCode] ?? '', retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined };
  } catch (err) {
    throw controller.signal.aborted && controller.signal.reason instanceof DeliveryTimeoutError ? controller.signal.reason : err;
  } finally {
    clearTimeout(timer);
    void agent.destroy().catch(() => {});
  }
}

function describeError(err: unknown): string {
  const refused = refusalOf(err);
  if (refused) return refused.message;
  if (err instanceof DeliveryTimeoutError) return err.message;
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code}: ${e.message}` : String(e.message ?? e);
}

/** Sends one signed attempt and classifies it. Never throws. */
export async function attemptDelivery(opts: {
  url: string;
  secret: string;
  messageId: string;
  body: string;
  allowInsecure: boolean;
  timeoutMs: number;
}): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    // Scheme, credentials and IP-literal hosts; names are checked as they resolve (guardedLookup).
    const url = checkUrlSyntax(opts.url, { allowInsecure: opts.allowInsecure });
    const headers = signatureHeaders(opts.secret, opts.messageId, opts.body);
    const res = await post(url, opts.body, { ...headers }, opts.allowInsecure, opts.timeoutMs);
    const verdict = classifyStatus(res.status);
    const retryAfterMs = verdict === 'retry' ? parseRetryAfter(res.retryAfter, Date.now()) : undefined;
    return {
      statusCode: res.status,
      durationMs: elapsed(),
      error: verdict === 'succeeded' ? null : `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`,
      verdict,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    };
  } catch (err) {
    return {
      statusCode: null,
      durationMs: elapsed(),
      error: describeError(err).slice(0, 500),
      verdict: refusalOf(err) ? 'failed' : 'retry',
    };
  }
}

/** The wait before the attempt after attempt number `attempt` (1-based), or null when none is left. */
export function nextDelayMs(policy: DeliveryPolicy, attempt: number, retryAfterMs?: number, random: () => number = Math.random): number | null {
  const base = policy.retryDelaysMs[attempt - 1];
  if (base === undefined) return null;
  const jittered = Math.round(base * (1 + policy.jitter * random()));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, policy.maxRetryAfterMs));
}

interface DeliveryRow {
  id: string;
  workspace_id: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  endpoint_id: string;
  url: string;
  secret: Buffer;
  enabled: boolean;
  payload: Record<string, unknown>;
}

export type DeliveryOutcome = 'missing' | 'settled' | 'endpoint_disabled' | 'succeeded' | 'retrying' | 'failed';

/**
 * Runs the next attempt of a delivery and records it. Safe to call for a delivery that is gone
 * (endpoint removed), already settled, or whose endpoint was disabled meanwhile.
 */
export async function deliverOnce(
  app: Pick<AppContext, 'pool' | 'secrets' | 'config'>,
  deliveryId: string,
  logger: Logger,
  policy: DeliveryPolicy = DEFAULT_POLICY,
): Promise<DeliveryOutcome> {
  const { rows } = await app.pool.query<Omit<DeliveryRow, 'payload'> & { event_id: string }>(
    `select d.id, d.workspace_id, d.status, d.attempts, d.endpoint_id, d.event_id, ep.url, ep.secret, ep.enabled
       from webhook_deliveries d
       join webhook_endpoints ep on ep.id = d.endpoint_id
      where d.id = $1`,
    [deliveryId],
  );
  const row = rows[0];
  if (!row) return 'missing';
  if (row.status !== 'pending') return 'settled';
  if (!row.enabled) {
    await failForDisabledEndpoint(app.pool, row.id);
    return 'endpoint_disabled';
  }
  // The body is the event's payload, as the outbox keeps it (the event goes with its deliveries).
  const payload = await eventPayload(app.pool, row.event_id);
  if (!payload) return 'missing';
  const d: DeliveryRow = { ...row, payload };

  const attempt = d.attempts + 1;
  const body = JSON.stringify(d.payload);
  const result = await attemptDelivery({
    url: d.url,
    secret: app.secrets.decrypt(d.secret),
    messageId: d.id,
    body,
    allowInsecure: app.config.ALLOW_INSECURE_OUTBOUND_URLS,
    timeoutMs: policy.timeoutMs,
  });
  const delay = result.verdict === 'retry' ? nextDelayMs(policy, attempt, result.retryAfterMs) : null;
  const outcome: 'succeeded' | 'retrying' | 'failed' = result.verdict === 'succeeded' ? 'succeeded' : delay !== null ? 'retrying' : 'failed';
  const host = hostOf(new URL(d.url));
  const log = logger.child({ deliveryId: d.id, endpointId: d.endpoint_id, workspaceId: d.workspace_id, host, attempt });

  const recorded = await withTx(app.pool, async (client) => {
    const record = {
      previousAttempts: d.attempts,
      outcome,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      retryInMs: delay,
    };
    if (!(await recordAttempt(client, d.id, record))) return null;
    if (outcome === 'succeeded') await recordEndpointSuccess(client, d.endpoint_id);
    if (outcome !== 'failed') return { disabled: null };
    return {
      disabled: await recordEndpointFailure(client, d.endpoint_id, { gone: result.verdict === 'gone', max: app.config.WEBHOOK_MAX_CONSECUTIVE_FAILURES }),
    };
  });
  if (!recorded) return 'settled';
  if (recorded.disabled) {
    log.warn(recorded.disabled, `webhook endpoint disabled: ${recorded.disabled.reason}; re-enable it with sigsync webhook enable`);
  }

  const fields = { outcome, statusCode: result.statusCode, durationMs: result.durationMs, error: result.error, retryInMs: delay ?? undefined };
  if (outcome === 'succeeded') log.info(fields, 'webhook delivered');
  else if (outcome === 'retrying') log.info(fields, 'webhook attempt failed; retry scheduled');
  else log.warn(fields, 'webhook delivery failed');
  return outcome;
}
