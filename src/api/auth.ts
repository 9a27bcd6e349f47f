/**
 * Auth for /v1: `Authorization: Bearer <key>` against the hashed keys, or, for the console in a
 * browser, its session cookie (src/console/sessions.ts). The workspace of the key or session becomes
 * `request.workspaceId`; every v1 query is scoped by it. The hook is added inside the /v1 plugin
 * scope, so it covers exactly the v1 routes.
 *
 * A request authenticated by the cookie that changes something (any method but GET, HEAD and
 * OPTIONS) must also carry the session's CSRF token in `X-CSRF-Token`: a cross-site form or fetch
 * cannot read it, so it cannot forge the action (the cookie is SameSite as well). A bearer key
 * wins over a cookie; API keys are never accepted from a cookie.
 *
 * The cookie's name follows PUBLIC_BASE_URL, never the Host header: on https only
 * `__Host-sigsync_console` is read (a browser takes it only from this exact origin, Secure, without
 * Domain), so a plain `sigsync_console` planted by a sibling host is ignored wherever it comes in the
 * header; on a loopback http base URL only the plain name is read, and only from a loopback client.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { verifyApiKey, type KeyScope } from '../db/apiKeys.ts';
import { csrfMatches, findSession, sessionActor, type ConsoleSession } from '../console/sessions.ts';
import type { Actor } from '../db/audit.ts';
import { ApiError } from '../errors.ts';
import { classifyAddress } from '../net/ssrf.ts';

declare module 'fastify' {
  interface FastifyRequest {
    workspaceId: string;
    /** Who is calling, for the audit trail: the console session's person or the API key. */
    actor?: Actor;
  }
}

/** The console's session cookie; `__Host-` (Secure, no Domain, Path=/) outside loopback. */
export const SESSION_COOKIE = 'sigsync_console';
export const SECURE_SESSION_COOKIE = `__Host-${SESSION_COOKIE}`;
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
}

/** The console cookie's name: `__Host-` when PUBLIC_BASE_URL is https, the plain one on a loopback http base URL. */
export function sessionCookieName(publicBaseUrl: string): string {
  return new URL(publicBaseUrl).protocol === 'https:' ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
}

/** Whether the request's client address (after TRUST_PROXY) is this machine's. */
function fromLoopback(req: FastifyRequest): boolean {
  try {
    return classifyAddress(req.ip) === 'loopback';
  } catch {
    return false;
  }
}

/**
 * The value of the console's session cookie: the first cookie of that one name (`sessionCookieName`).
 * The plain name is a loopback run's, so it counts only from a loopback client address: a server
 * listening beyond loopback without an https PUBLIC_BASE_URL (HOST=0.0.0.0, PUBLIC_BASE_URL unset)
 * takes no cookie from anywhere else.
 */
export function sessionToken(req: FastifyRequest, publicBaseUrl: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  const wanted = sessionCookieName(publicBaseUrl);
  if (wanted === SESSION_COOKIE && !fromLoopback(req)) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === wanted) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** What finding a session needs: the pool, and PUBLIC_BASE_URL for the cookie's name. */
export interface SessionSource {
  pool: pg.Pool;
  config: { PUBLIC_BASE_URL: string };
}

/**
 * The console session of the request's cookie, or undefined. With `failures`, a cookie that opens no
 * session counts as a failed sign-in, and a client over that limit is answered 429 before the lookup.
 */
export async function sessionOf(
  app: SessionSource,
  req: FastifyRequest,
  failures: FailureLimit | null = null,
  reply?: FastifyReply,
): Promise<ConsoleSession | undefined> {
  const token = sessionToken(req, app.config.PUBLIC_BASE_URL);
  if (!token) return undefined;
  if (failures && reply) await failures.refuseOverLimit(req, reply);
  const session = await findSession(app.pool, token);
  if (!session) await failures?.failed(req);
  return session;
}

export function csrfRefused(): ApiError {
  return new ApiError(403, 'authentication_error', 'csrf_token_invalid', `Send the console session's CSRF token in the ${CSRF_HEADER} header.`);
}

/** Throws unless a cookie-authenticated request that changes something carries the CSRF token. */
export function checkCsrf(req: FastifyRequest, session: ConsoleSession): void {
  if (SAFE_METHODS.has(req.method)) return;
  const header = req.headers[CSRF_HEADER];
  if (!csrfMatches(session, typeof header === 'string' ? header : undefined)) throw csrfRefused();
}

/** What a failed authentication costs the client (src/api/rateLimits.ts `authFailureLimit`). */
export interface FailureLimit {
  /** Throws (429) when the client has failed too often already; runs before any key is looked up. */
  refuseOverLimit(req: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Counts one failure. */
  failed(req: FastifyRequest): Promise<void>;
}

/**
 * With `failures` (RATE_LIMIT_AUTH_FAILURES), every 401 counts against the client address, and an
 * address over the limit is answered 429 before its key is looked up: an unknown key cannot be
 * used to make the database work without bound.
 */
export function requireApiKey(scope: FastifyInstance, app: SessionSource, keyScope: KeyScope = 'api', failures: FailureLimit | null = null): void {
  const { pool } = app;
  scope.decorateRequest('workspaceId', '');
  scope.addHook('onRequest', async (req, reply) => {
    await failures?.refuseOverLimit(req, reply);
    const token = bearerToken(req);
    if (!token && keyScope === 'api') {
      const session = await sessionOf(app, req);
      if (session) {
        checkCsrf(req, session);
        req.workspaceId = session.workspaceId;
        req.actor = sessionActor(session);
        return;
      }
    }
    const found = token ? await verifyApiKey(pool, token, keyScope) : undefined;
    if (!found) {
      await failures?.failed(req);
      throw ApiError.unauthorized();
    }
    req.workspaceId = found.workspaceId;
    req.actor = { kind: 'api_key', name: `${found.name} (${found.prefix})`, id: found.keyId };
  });
}

/**
 * Whether the request carries a live key of either scope (or a console session). The not-found
 * handler asks it for unknown /v1 paths, so authentication comes before routing: without a valid
 * key every /v1 path is 401, and probing cannot tell which routes exist.
 */
export async function hasValidKey(app: SessionSource, req: FastifyRequest): Promise<boolean> {
  const { pool } = app;
  const token = bearerToken(req);
  if (!token) return (await sessionOf(app, req)) !== undefined;
  return (await verifyApiKey(pool, token, 'api')) !== undefined || (await verifyApiKey(pool, token, 'addin')) !== undefined;
}
