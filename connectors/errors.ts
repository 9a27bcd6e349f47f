/**
 * Connector errors (connectors/types.ts re-exports them with the contracts): a provider's failure
 * becomes a `ConnectorError` with a stable `code`, from which the engine alone decides retry or
 * transition; a response that does not parse with its raw schema is an `InvalidResponseError`.
 */
import type { z } from 'zod';

export type ConnectorErrorCode =
  | 'access_lost'
  | 'rate_limited'
  | 'user_not_found'
  | 'forbidden'
  | 'unauthorized_client'
  | 'channel_not_found'
  | 'signature_too_long'
  | 'multi_signatures_not_supported'
  | 'transient'
  | 'invalid_response';

export interface ConnectorErrorData {
  /** HTTP status of the provider's answer, when there was one. */
  status?: number;
  /** The provider's own error code or reason (e.g. `userRateLimitExceeded`, `invalid_grant`, `AADSTS7000215`). */
  providerCode?: string;
  cause?: unknown;
}

/**
 * Credentials a provider may quote back in an error text: a 401 that repeats the request's
 * Authorization header, a token endpoint that repeats the form it was sent. Bearer and Basic
 * credentials, Google access and refresh tokens, JWTs, Slack tokens, and secret-named form or JSON
 * fields. Connectors scrub the secrets of their own credentials; this catches the tokens issued at
 * run time, which no connector holds as credentials.
 */
const TOKEN_PATTERNS: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, '$1 [redacted]'],
  [/\bya29\.[A-Za-z0-9._-]+/g, '[redacted]'],
  [/\b1\/\/[A-Za-z0-9._-]{20,}/g, '[redacted]'],
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted]'],
  [/\bxox[a-z]-[A-Za-z0-9-]+/g, '[redacted]'],
  [/\b(client_secret|client_assertion|assertion|refresh_token|access_token|id_token|password)=[^&\s"']+/gi, '$1=[redacted]'],
  [/("(?:client_secret|client_assertion|assertion|refresh_token|access_token|id_token|password|private_key)"\s*:\s*")(?:[^"\\]|\\.)*"/gi, '$1[redacted]"'],
];

/** The text with every token-shaped credential replaced by `[redacted]`. */
export function redactTokens(text: string): string {
  let out = text;
  for (const [pattern, replacement] of TOKEN_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

export abstract class ConnectorError extends Error {
  abstract readonly code: ConnectorErrorCode;
  readonly status: number | undefined;
  readonly providerCode: string | undefined;

  /** `message` is scrubbed of token-shaped credentials (redactTokens): it reaches logs, runs and installations. */
  constructor(message: string, data: ConnectorErrorData = {}) {
    super(redactTokens(message), data.cause === undefined ? undefined : { cause: data.cause });
    this.status = data.status;
    this.providerCode = data.providerCode;
  }
}

/** Credentials revoked, expired or not authorised: the integration moves to `access_lost`. */
export class AccessLostError extends ConnectorError {
  override readonly name = 'AccessLostError';
  readonly code = 'access_lost' as const;
}

/** The provider asked us to slow down. `retryAfterMs` comes from Retry-After, or a default backoff. */
export class RateLimitedError extends ConnectorError {
  override readonly name = 'RateLimitedError';
  readonly code = 'rate_limited' as const;
  readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number, data: ConnectorErrorData = {}) {
    super(message, data);
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx, timeouts, network errors: worth retrying. */
export class TransientError extends ConnectorError {
  override readonly name = 'TransientError';
  readonly code = 'transient' as const;
}

/** The provider answered something that does not match its documented shape. */
export class InvalidResponseError extends ConnectorError {
  override readonly name = 'InvalidResponseError';
  readonly code = 'invalid_response' as const;
  readonly issues: z.core.$ZodIssue[];

  constructor(what: string, issues: z.core.$ZodIssue[], data: ConnectorErrorData = {}) {
    const first = issues[0];
    super(`${what}: unexpected response${first ? ` at ${first.path.join('.') || '(root)'}: ${first.message}` : ''}`, data);
    this.issues = issues;
  }
}

export type MailboxErrorCode =
  'user_not_found' | 'forbidden' | 'unauthorized_client' | 'channel_not_found' | 'signature_too_long' | 'multi_signatures_not_supported';

/** A failure that concerns one mailbox, not the whole integration. The installation becomes `failed`. */
export class MailboxError extends ConnectorError {
  override readonly name = 'MailboxError';
  readonly code: MailboxErrorCode;

  constructor(code: MailboxErrorCode, message: string, data: ConnectorErrorData = {}) {
    super(message, data);
    this.code = code;
  }
}

/** An incremental token the provider no longer accepts (Graph 410 Gone): fall back to a full listing. */
export class CursorExpiredError extends Error {
  override readonly name = 'CursorExpiredError';
}

/** Parses a provider response with its raw schema; a mismatch is an InvalidResponseError. */
export function parseProvider<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new InvalidResponseError(what, r.error.issues);
  return r.data;
}

/** Retry-After (seconds or HTTP date) in ms, or the fallback. */
export function retryAfterMs(header: string | null | undefined, fallbackMs = 1000): number {
  if (!header) return fallbackMs;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? fallbackMs : Math.max(0, date - Date.now());
}
