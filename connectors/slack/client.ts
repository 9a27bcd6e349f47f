/**
 * The Slack Web API client every Slack connector shares, and the one function that turns a Slack
 * failure into a ConnectorError.
 *
 * `@slack/web-api`'s defaults suit an interactive bot, not a sync worker: ten retries over about
 * thirty minutes, and on a 429 it pauses its queue for the Retry-After time. Here `retryConfig` has
 * zero retries and `rejectRateLimitedCalls` is on, so a 429 surfaces at once as a
 * RateLimitedError(retryAfterMs) and the engine reschedules instead of blocking a worker. The
 * connector context's `signal` is added to every request's own timeout through the SDK's `fetch`
 * option, so a stopping worker cancels the calls in flight.
 */
import {
  LogLevel,
  type Logger as SlackLogger,
  WebClient,
  WebAPIHTTPError,
  WebAPIPlatformError,
  WebAPIRateLimitedError,
  WebAPIRequestError,
} from '@slack/web-api';
import type { Logger } from 'pino';
import { AccessLostError, ConnectorError, MailboxError, RateLimitedError, redactTokens, TransientError } from '../types.ts';
import type { SlackConfig, SlackCredentials } from './schemas.ts';

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';
const REQUEST_TIMEOUT_MS = 30_000;
/** Used when Slack rate-limits without a usable Retry-After header. */
const DEFAULT_RETRY_AFTER_MS = 60_000;

/** Slack answers that mean the token or the app's grant is no longer usable. */
const ACCESS_LOST = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
  'missing_scope',
  'no_permission',
  'not_allowed_token_type',
  'team_access_not_granted',
  'ekm_access_denied',
  'org_login_required',
]);
const TRANSIENT = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
const USER_NOT_FOUND = new Set(['users_not_found', 'user_not_found', 'user_disabled', 'cannot_dm_bot']);

/**
 * The one mapping from a Slack failure to a connector error.
 * Error names: https://docs.slack.dev/reference/methods (each method's "Errors" table).
 */
export function slackError(err: unknown, method: string): ConnectorError {
  if (err instanceof ConnectorError) return err;
  if (err instanceof WebAPIRateLimitedError) {
    return new RateLimitedError(`Slack rate-limited ${method}`, err.retryAfter * 1000, { status: 429, providerCode: 'ratelimited', cause: err });
  }
  if (err instanceof WebAPIPlatformError) {
    const code = err.data.error;
    const data = { status: 200, providerCode: code, cause: err };
    if (ACCESS_LOST.has(code)) {
      const scope = (err.data as { needed?: unknown }).needed;
      const needed = typeof scope === 'string' ? ` (needs ${scope})` : '';
      return new AccessLostError(`Slack refused ${method}: ${code}${needed}`, data);
    }
    if (code === 'ratelimited') {
      const after = err.data.response_metadata?.retryAfter;
      return new RateLimitedError(`Slack rate-limited ${method}`, typeof after === 'number' ? after * 1000 : DEFAULT_RETRY_AFTER_MS, data);
    }
    if (USER_NOT_FOUND.has(code)) return new MailboxError('user_not_found', `Slack has no such user for ${method}: ${code}`, data);
    if (code === 'channel_not_found') return new MailboxError('channel_not_found', `Slack could not find the conversation for ${method}: ${code}`, data);
    if (code === 'msg_too_long' || code === 'msg_blocks_too_long')
      return new MailboxError('signature_too_long', `Slack refused the message as too long: ${code}`, data);
    if (TRANSIENT.has(code)) return new TransientError(`Slack failed ${method}: ${code}`, data);
    // Anything else (invalid_arguments, invalid_blocks...) is retried like a transient error, and
    // the run or install reports Slack's own error name.
    return new TransientError(`Slack answered ${method} with "${code}"`, data);
  }
  if (err instanceof WebAPIHTTPError) {
    if (err.statusCode === 429) return new RateLimitedError(`Slack rate-limited ${method}`, DEFAULT_RETRY_AFTER_MS, { status: 429, cause: err });
    return new TransientError(`Slack answered ${method} with HTTP ${err.statusCode}`, { status: err.statusCode, cause: err });
  }
  if (err instanceof WebAPIRequestError) {
    return new TransientError(`Slack request ${method} failed: ${err.original.message}`, { cause: err });
  }
  // @slack/web-api rejects a 429 whose Retry-After it cannot read with a plain Error.
  if (err instanceof Error && /Retry header did not contain a valid timeout/.test(err.message)) {
    return new RateLimitedError(`Slack rate-limited ${method}`, DEFAULT_RETRY_AFTER_MS, { status: 429, cause: err });
  }
  return new TransientError(`Slack request ${method} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/** Runs one Web API call and maps its failure. */
export async function call<T>(method: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw slackError(err, method);
  }
}

/**
 * The SDK's logger interface on top of the connector's pino logger (the SDK never logs to the
 * console). Its debug lines carry whole responses, which may quote the token back: every line is
 * scrubbed of the bot token and of anything token-shaped.
 */
function slackLogger(logger: Logger, botToken: string): SlackLogger {
  const log = logger.child({ component: 'slack-web-api' });
  const line = (msg: unknown[]) => {
    const text = msg.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ');
    return redactTokens(botToken ? text.split(botToken).join('[redacted]') : text);
  };
  return {
    debug: (...msg: unknown[]) => log.debug(line(msg)),
    info: (...msg: unknown[]) => log.info(line(msg)),
    warn: (...msg: unknown[]) => log.warn(line(msg)),
    error: (...msg: unknown[]) => log.error(line(msg)),
    setLevel: () => {},
    getLevel: () => (log.isLevelEnabled('debug') ? LogLevel.DEBUG : log.isLevelEnabled('info') ? LogLevel.INFO : LogLevel.WARN),
    setName: () => {},
  };
}

export function createSlackClient(ctx: { config: SlackConfig; credentials: SlackCredentials; logger: Logger; signal?: AbortSignal | undefined }): WebClient {
  const url = ctx.config.base_url ?? DEFAULT_SLACK_API_URL;
  const { signal } = ctx;
  return new WebClient(ctx.credentials.bot_token, {
    ...(signal ? { fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }) } : {}),
    slackApiUrl: url.endsWith('/') ? url : `${url}/`,
    logger: slackLogger(ctx.logger, ctx.credentials.bot_token),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: REQUEST_TIMEOUT_MS,
    allowAbsoluteUrls: false,
    ...(ctx.config.team_id ? { teamId: ctx.config.team_id } : {}),
  });
}

/** Spaces calls evenly: at most `perMinute` per minute, one at a time. */
export class Pacer {
  private readonly intervalMs: number;
  private next = 0;

  constructor(perMinute: number) {
    this.intervalMs = 60_000 / perMinute;
  }

  async wait(): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }
}
