/**
 * Google errors -> ConnectorError, in one place for the directory source, the Gmail installer and
 * the photo source.
 *
 * | Google answer                                                        | directory, photos     | Gmail install                  |
 * |----------------------------------------------------------------------|-----------------------|--------------------------------|
 * | token `invalid_grant` "Invalid email or User ID" / "Not a valid email" | access_lost           | user_not_found                 |
 * | token `unauthorized_client`                                          | access_lost           | unauthorized_client            |
 * | other token errors (`invalid_grant`, `access_denied`,                | access_lost           | access_lost                    |
 * |   `admin_policy_enforced`, `disabled_client`, `deleted_client`, ...)  |                       |                                |
 * | 401                                                                  | access_lost           | access_lost                    |
 * | 403 `userRateLimitExceeded` `rateLimitExceeded` `quotaExceeded`       | rate_limited          | rate_limited                   |
 * |   `dailyLimitExceeded`, and any 429                                  |                       |                                |
 * | 403 `accessNotConfigured` (API disabled in the project)              | access_lost           | access_lost                    |
 * | other 403 ("Not Authorized to access this resource/api", scopes)      | access_lost           | forbidden                      |
 * | 400 `failedPrecondition` "Mail service not enabled"                  | access_lost (1)       | forbidden                      |
 * | 400 "Signature exceeds maximum length"                               | access_lost (1)       | signature_too_long             |
 * | 404                                                                  | access_lost (1)       | user_not_found                 |
 * | other 4xx                                                            | access_lost (1)       | forbidden                      |
 * | 408, 5xx, timeouts, network errors                                   | transient             | transient                      |
 *
 * (1) An unknown customer or domain, or a bad request built from the config: nothing a retry can
 * fix, so the integration waits for an admin, with Google's message. The photo source answers a
 * 404 with "no photo" before it gets here.
 *
 * Rate limits carry Retry-After when Google sends it, else DEFAULT_RATE_LIMIT_BACKOFF_MS.
 * Messages keep Google's own text (with the credential secrets scrubbed); the cause is a
 * GoogleApiCallError holding status, reason and the request line, never the request itself
 * (whose headers and body carry the bearer token or the signed assertion).
 */
import { AccessLostError, ConnectorError, MailboxError, RateLimitedError, TransientError, retryAfterMs } from '../types.ts';
import type { Redactor } from './auth.ts';
import { GoogleApiErrorBody, GoogleTokenErrorBody } from './schemas.ts';

/** Backoff when Google rate-limits without Retry-After (Directory and Gmail quotas are per minute). */
export const DEFAULT_RATE_LIMIT_BACKOFF_MS = 10_000;

const RATE_LIMIT_REASONS = new Set(['userRateLimitExceeded', 'rateLimitExceeded', 'quotaExceeded', 'dailyLimitExceeded', 'RESOURCE_EXHAUSTED']);
const USER_NOT_FOUND_TOKEN = /invalid email or user id|not a valid email/i;

export type GoogleCallSite = 'directory' | 'mailbox' | 'photo';

/** The redacted essentials of a failed Google call: what a log or a support replay needs. */
export class GoogleApiCallError extends Error {
  override readonly name = 'GoogleApiCallError';
  readonly status: number | undefined;
  readonly reason: string | undefined;
  readonly request: string | undefined;

  constructor(message: string, data: { status?: number | undefined; reason?: string | undefined; request?: string | undefined }) {
    super(message);
    this.status = data.status;
    this.reason = data.reason;
    this.request = data.request;
  }
}

interface HttpErrorLike {
  message?: unknown;
  code?: unknown;
  status?: unknown;
  config?: { method?: unknown; url?: unknown };
  response?: { status?: unknown; data?: unknown; headers?: unknown };
}

function asHttpError(err: unknown): HttpErrorLike | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as HttpErrorLike;
  // gaxios errors carry the request config; plain errors (bugs) do not.
  return e.config !== undefined || e.response !== undefined ? e : undefined;
}

function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const v = (headers as Record<string, unknown>)[name] ?? (headers as Record<string, unknown>)[name.toLowerCase()];
  return typeof v === 'string' ? v : undefined;
}

function requestLine(config: HttpErrorLike['config']): string | undefined {
  if (!config?.url) return undefined;
  const raw = typeof config.url === 'string' || config.url instanceof URL ? String(config.url) : undefined;
  if (!raw) return undefined;
  let path = raw;
  try {
    const u = new URL(raw);
    path = `${u.origin}${u.pathname}`;
  } catch {
    // keep the raw text
  }
  return `${typeof config.method === 'string' ? config.method : 'GET'} ${path}`;
}

export interface MapOptions {
  /** Who called: the same answer means different things to a directory listing and a mailbox install. */
  site: GoogleCallSite;
  /** What was being done, e.g. `users.list`; prefixes the message. */
  what: string;
  redact: Redactor;
}

/**
 * Turns anything a Google call threw into a ConnectorError. Errors that are not provider answers
 * (programming errors) are returned unchanged, to reach the job runner as they are.
 */
export function toConnectorError(err: unknown, opts: MapOptions): unknown {
  if (err instanceof ConnectorError) return err;
  const http = asHttpError(err);
  if (!http) return err;

  const { site, what, redact } = opts;
  const status = typeof http.response?.status === 'number' ? http.response.status : undefined;
  const request = requestLine(http.config);

  // No answer at all: timeout, reset, DNS.
  if (status === undefined) {
    const code = typeof http.code === 'string' ? http.code : undefined;
    const message = redact(`${what}: ${code ?? 'network error'}: ${String(http.message ?? '')}`);
    return new TransientError(message, { providerCode: code, cause: new GoogleApiCallError(message, { reason: code, request }) });
  }

  const data = http.response?.data;
  const token = GoogleTokenErrorBody.safeParse(data);
  const api = token.success ? undefined : GoogleApiErrorBody.safeParse(data);

  let providerCode: string | undefined;
  let providerMessage: string;
  if (token.success) {
    providerCode = token.data.error;
    providerMessage = token.data.error_description ? `${token.data.error}: ${token.data.error_description}` : token.data.error;
  } else if (api?.success) {
    providerCode = api.data.error.errors?.[0]?.reason ?? api.data.error.status ?? undefined;
    providerMessage = api.data.error.message ?? api.data.error.errors?.[0]?.message ?? `HTTP ${status}`;
  } else {
    providerMessage = typeof data === 'string' && data.length > 0 && data.length < 500 ? data : `HTTP ${status}`;
  }

  const message = redact(`${what}: ${providerMessage}`);
  const cause = new GoogleApiCallError(message, { status, reason: providerCode, request });
  const info = { status, providerCode, cause };

  if (status === 429 || (providerCode !== undefined && RATE_LIMIT_REASONS.has(providerCode) && (status === 403 || status === 429))) {
    return new RateLimitedError(message, retryAfterMs(header(http.response?.headers, 'retry-after'), DEFAULT_RATE_LIMIT_BACKOFF_MS), info);
  }
  if (status === 408 || status >= 500) return new TransientError(message, info);

  if (token.success) {
    if (site === 'mailbox' && providerCode === 'unauthorized_client') return new MailboxError('unauthorized_client', message, info);
    if (site === 'mailbox' && providerCode === 'invalid_grant' && USER_NOT_FOUND_TOKEN.test(providerMessage)) {
      return new MailboxError('user_not_found', message, info);
    }
    return new AccessLostError(message, info);
  }

  if (status === 401 || providerCode === 'accessNotConfigured') return new AccessLostError(message, info);

  if (site === 'mailbox') {
    if (status === 404) return new MailboxError('user_not_found', message, info);
    if (status === 400 && /exceeds maximum length|too long/i.test(providerMessage)) return new MailboxError('signature_too_long', message, info);
    return new MailboxError('forbidden', message, info);
  }
  return new AccessLostError(message, info);
}

/**
 * Whether a call failed with 404 from the API resource whose path contains `pathPart` (and not,
 * say, from a misconfigured token endpoint).
 */
export function isNotFound(err: unknown, pathPart: string): boolean {
  const http = asHttpError(err);
  if (http?.response?.status !== 404) return false;
  const url = http.config?.url;
  return (typeof url === 'string' || url instanceof URL) && String(url).includes(pathPart);
}

/** Runs one Google call and rethrows its failure as a ConnectorError. */
export async function call<T>(opts: MapOptions, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toConnectorError(err, opts);
  }
}
