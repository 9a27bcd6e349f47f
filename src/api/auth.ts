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
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { verifyApiKey, type KeyScope } from '../db/apiKeys.ts';
import { csrfMatches, findSession, type ConsoleSession } from '../console/sessions.ts';
import { ApiError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    workspaceId: string;
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

/** The value of the console's session cookie, either name. */
export function sessionToken(req: FastifyRequest): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    if (name === SESSION_COOKIE || name === SECURE_SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The console session of the request's cookie, or undefined. */
export async function sessionOf(pool: pg.Pool, req: FastifyRequest): Promise<ConsoleSession | undefined> {
  const token = sessionToken(req);
  return token ? findSession(pool, token) : undefined;
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
export function requireApiKey(scope: FastifyInstance, pool: pg.Pool, keyScope: KeyScope = 'api', failures: FailureLimit | null = null): void {
  scope.decorateRequest('workspaceId', '');
  scope.addHook('onRequest', async (req, reply) => {
    await failures?.refuseOverLimit(req, reply);
    const token = bearerToken(req);
    if (!token && keyScope === 'api') {
      const session = await sessionOf(pool, req);
      if (session) {
        checkCsrf(req, session);
        req.workspaceId = session.workspaceId;
        return;
      }
    }
    const found = token ? await verifyApiKey(pool, token, keyScope) : undefined;
    if (!found) {
      await failures?.failed(req);
      throw ApiError.unauthorized();
    }
    req.workspaceId = found.workspaceId;
  });
}

/**
 * Whether the request carries a live key of either scope (or a console session). The not-found
 * handler asks it for unknown /v1 paths, so authentication comes before routing: without a valid
 * key every /v1 path is 401, and probing cannot tell which routes exist.
 */
export async function hasValidKey(pool: pg.Pool, req: FastifyRequest): Promise<boolean> {
  const token = bearerToken(req);
  if (!token) return (await sessionOf(pool, req)) !== undefined;
  return (await verifyApiKey(pool, token, 'api')) !== undefined || (await verifyApiKey(pool, token, 'addin')) !== undefined;
}
