/**
 * The Microsoft Graph client every Microsoft connector shares, and the one function that turns a
 * Graph or token-endpoint failure into a ConnectorError.
 *
 * - `@microsoft/microsoft-graph-client` with an explicit middleware chain: the SDK's RetryHandler is
 *   kept with zero retries, because the sync engine and the install pipeline retry from
 *   `RateLimitedError.retryAfterMs` themselves instead of sleeping inside a worker.
 * - The SDK attaches the bearer token only to https URLs on Graph's own hosts or on `customHosts`,
 *   so the configured base URL's host is added to `customHosts` (national clouds, the sandbox, tests).
 * - Requests use the RAW response type: this module reads the status, headers and body itself, so a
 *   Retry-After header is never lost and every page is parsed with its raw schema.
 */
import {
  AuthenticationHandler,
  Client,
  HTTPMessageHandler,
  RedirectHandler,
  RedirectHandlerOptions,
  ResponseType,
  RetryHandler,
  RetryHandlerOptions,
  TelemetryHandler,
} from '@microsoft/microsoft-graph-client';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import { z } from 'zod';
import {
  AccessLostError,
  type ConnectorError,
  CursorExpiredError,
  InvalidResponseError,
  MailboxError,
  parseProvider,
  RateLimitedError,
  retryAfterMs,
  TransientError,
} from '../types.ts';
import { createGraphAuth, DEFAULT_GRAPH_URL, type GraphAuth } from './auth.ts';
import { GraphErrorBody, type MicrosoftConfig, type MicrosoftCredentials } from './schemas.ts';

/** How long one Graph request may take before it counts as a transient failure. */
const REQUEST_TIMEOUT_MS = 60_000;
/** Used when Graph throttles without a Retry-After header. */
const DEFAULT_RETRY_AFTER_MS = 10_000;

/**
 * Where a call happens decides how a 403 reads: in a mailbox call it concerns that mailbox
 * (e.g. an Exchange application access policy that excludes it), in a directory call it means the
 * app lost its permissions.
 */
export type GraphCallScope = 'directory' | 'mailbox';

export type GraphFailure =
  | { kind: 'token'; error: unknown }
  | { kind: 'network'; error: unknown }
  | { kind: 'http'; status: number; code?: string | undefined; message?: string | undefined; retryAfter?: string | null | undefined };

/** Token endpoint answers that mean the credentials or the consent are no longer usable. */
const ACCESS_LOST_OAUTH_ERRORS = new Set([
  'invalid_client',
  'unauthorized_client',
  'invalid_grant',
  'invalid_request',
  'invalid_scope',
  'access_denied',
  'consent_required',
]);
const ACCESS_LOST_AADSTS = new Set([
  '700016', // unauthorized_client: application not found in the tenant
  '7000215', // invalid_client: invalid client secret
  '7000222', // invalid_client: client secret expired
  '65001', // consent required
  '7000112', // application disabled
  '90002', // tenant not found
  '900023', // tenant id malformed
]);

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** `invalid_client: Error(s): 7000215 - ... - Description: AADSTS7000215: Invalid client secret provided. ...` */
function describeTokenError(message: string): { oauth?: string | undefined; aadsts?: string | undefined; description: string } {
  const oauth = /^([a-z_]+):/.exec(message)?.[1];
  const aadsts = /AADSTS(\d+)/.exec(message)?.[1];
  const afterDescription = message.split('Description: ')[1] ?? message;
  const description = afterDescription.split(/\r?\n| - Correlation ID| - Trace ID/)[0]!.trim();
  return { oauth, aadsts, description };
}

/**
 * The one mapping from a Graph failure to a connector error. Graph errors look like
 * {"error":{"code","message"}} (https://learn.microsoft.com/graph/errors); the token endpoint's
 * AADSTS codes are listed at https://learn.microsoft.com/entra/identity-platform/reference-error-codes.
 */
export function graphError(f: GraphFailure, scope: GraphCallScope): ConnectorError | CursorExpiredError {
  if (f.kind === 'token') {
    const message = errorMessage(f.error);
    const { oauth, aadsts, description } = describeTokenError(message);
    const providerCode = aadsts ? `AADSTS${aadsts}` : oauth;
    if ((aadsts && ACCESS_LOST_AADSTS.has(aadsts)) || (oauth && ACCESS_LOST_OAUTH_ERRORS.has(oauth))) {
      return new AccessLostError(`Microsoft Entra refused the app's credentials: ${description}`, { providerCode, cause: f.error });
    }
    return new TransientError(`could not get a Microsoft Graph token: ${description}`, { providerCode, cause: f.error });
  }
  if (f.kind === 'network') {
    return new TransientError(`Microsoft Graph request failed: ${errorMessage(f.error)}`, { cause: f.error });
  }
  const { status, code } = f;
  const detail = `${code ?? `HTTP ${status}`}${f.message ? `: ${f.message}` : ''}`;
  const data = { status, providerCode: code };
  if (status === 410) return new CursorExpiredError(`Microsoft Graph no longer accepts the delta token (${detail})`);
  if (status === 429 || (status === 503 && f.retryAfter)) {
    return new RateLimitedError(`Microsoft Graph is throttling requests (${detail})`, retryAfterMs(f.retryAfter, DEFAULT_RETRY_AFTER_MS), data);
  }
  if (status === 401) return new AccessLostError(`Microsoft Graph rejected the app's token (${detail})`, data);
  if (status === 403) {
    if (code === 'Authorization_RequestDenied' || scope === 'directory') {
      return new AccessLostError(`the app lacks a Microsoft Graph permission (${detail})`, data);
    }
    return new MailboxError('forbidden', `Microsoft Graph denied access to this mailbox (${detail})`, data);
  }
  if (status === 404) return new MailboxError('user_not_found', `Microsoft Graph has no such user or mailbox (${detail})`, data);
  return new TransientError(`Microsoft Graph answered ${status} (${detail})`, data);
}

/** Reads the code and message of a Graph error body, when it is one. */
async function httpFailure(res: Response): Promise<GraphFailure> {
  const text = await res.text().catch(() => '');
  let code: string | undefined;
  let message: string | undefined;
  try {
    const body = GraphErrorBody.safeParse(JSON.parse(text));
    if (body.success) {
      code = body.data.error.code;
      message = body.data.error.message ?? undefined;
    }
  } catch {
    // Not JSON (a gateway's HTML page, say): the status alone decides.
  }
  return { kind: 'http', status: res.status, code, message, retryAfter: res.headers.get('retry-after') };
}

const jsonText = z.string().transform((s, ctx) => {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'body is not JSON' });
    return z.NEVER;
  }
});

export interface GraphContext {
  config: MicrosoftConfig;
  credentials: MicrosoftCredentials;
  logger: Logger;
  /** Cancels every request (Graph calls and token requests) once aborted (ConnectorContext.signal). */
  signal?: AbortSignal | undefined;
}

export interface SendOptions {
  scope: GraphCallScope;
  body?: unknown;
  headers?: Record<string, string>;
}

export class GraphApi {
  /** Graph root with its version, without a trailing slash (e.g. https://graph.microsoft.com/v1.0). */
  readonly baseUrl: string;
  /** Graph beta root, for APIs that only exist there. */
  readonly betaUrl: string;
  readonly logger: Logger;
  private readonly auth: GraphAuth;
  private readonly client: Client;
  private readonly origins: Set<string>;
  private readonly signal: AbortSignal | undefined;

  constructor(ctx: GraphContext) {
    this.signal = ctx.signal;
    this.baseUrl = (ctx.config.base_url ?? DEFAULT_GRAPH_URL).replace(/\/+$/, '');
    this.betaUrl = (ctx.config.beta_url ?? this.baseUrl.replace(/\/v1\.0$/, '/beta')).replace(/\/+$/, '');
    this.logger = ctx.logger;
    this.auth = createGraphAuth(ctx.config, ctx.credentials, ctx.signal);
    this.origins = new Set([new URL(this.baseUrl).origin, new URL(this.betaUrl).origin]);
    const customHosts = new Set([new URL(this.baseUrl).hostname, new URL(this.betaUrl).hostname]);
    this.client = Client.initWithMiddleware({
      customHosts,
      // A configured CA is trusted by this client's requests only (an undici dispatcher on the global fetch).
      ...(ctx.config.ca_cert ? { fetchOptions: { dispatcher: new Agent({ connect: { ca: ctx.config.ca_cert } }) } as RequestInit } : {}),
      middleware: [
        new AuthenticationHandler({ getAccessToken: () => this.auth.token() }),
        new RetryHandler(new RetryHandlerOptions(0, 0)),
        new RedirectHandler(new RedirectHandlerOptions()),
        new TelemetryHandler(),
        new HTTPMessageHandler(),
      ],
    });
  }

  /** `${root}/${path}?k=v&...`; OData keys keep their `$`, values are used as given. */
  url(path: string, query: Record<string, string> = {}, root: string = this.baseUrl): string {
    const qs = Object.entries(query)
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    return `${root}/${path.replace(/^\/+/, '')}${qs ? `?${qs}` : ''}`;
  }

  /** One request. A non-2xx answer throws the mapped error; the caller reads the body. */
  async send(method: 'GET' | 'POST' | 'PATCH', url: string, opts: SendOptions): Promise<Response> {
    // Links handed back by Graph (nextLink, deltaLink) are followed only on the configured hosts,
    // so a stored or forged link can never carry the bearer token elsewhere.
    if (!this.origins.has(new URL(url).origin)) {
      throw new InvalidResponseError(`a link to ${new URL(url).origin}, which is not the configured Microsoft Graph host`, []);
    }
    // Token failures surface here, before the SDK would wrap them into an opaque GraphError.
    try {
      await this.auth.token();
    } catch (error) {
      throw graphError({ kind: 'token', error }, opts.scope);
    }
    let res: Response;
    try {
      const req = this.client
        .api(url)
        .responseType(ResponseType.RAW)
        .option('signal', this.signal ? AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), this.signal]) : AbortSignal.timeout(REQUEST_TIMEOUT_MS))
        .headers(opts.headers ?? {});
      res = (await (method === 'GET' ? req.get() : method === 'POST' ? req.post(opts.body) : req.patch(opts.body))) as Response;
    } catch (error) {
      throw graphError({ kind: 'network', error }, opts.scope);
    }
    if (!res.ok) throw graphError(await httpFailure(res), opts.scope);
    return res;
  }

  /** GET (or send) and parse the JSON answer with its raw schema; a mismatch is an InvalidResponseError. */
  async json<S extends z.ZodType>(method: 'GET' | 'POST' | 'PATCH', url: string, schema: S, what: string, opts: SendOptions): Promise<z.infer<S>> {
    const res = await this.send(method, url, opts);
    const text = await res.text();
    return parseProvider(schema, parseProvider(jsonText, text, what), what);
  }
}
