/**
 * Bearer auth for /v1: `Authorization: Bearer <key>` against the hashed keys. The workspace of the
 * key becomes `request.workspaceId`; every v1 query is scoped by it. The hook is added inside the
 * /v1 plugin scope, so it covers exactly the v1 routes.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type pg from 'pg';
import { verifyApiKey, type KeyScope } from '../db/apiKeys.ts';
import { ApiError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    workspaceId: string;
  }
}

export function bearerToken(req: FastifyRequest): string | undefined {
  const header = req.headers.authorization;
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m?.[1];
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
    const found = token ? await verifyApiKey(pool, token, keyScope) : undefined;
    if (!found) {
      await failures?.failed(req);
      throw ApiError.unauthorized();
    }
    req.workspaceId = found.workspaceId;
  });
}

/**
 * Whether the request carries a live key of either scope. The not-found handler asks it for unknown
 * /v1 paths, so authentication comes before routing: without a valid key every /v1 path is 401, and
 * probing cannot tell which routes exist.
 */
export async function hasValidKey(pool: pg.Pool, req: FastifyRequest): Promise<boolean> {
  const token = bearerToken(req);
  if (!token) return false;
  return (await verifyApiKey(pool, token, 'api')) !== undefined || (await verifyApiKey(pool, token, 'addin')) !== undefined;
}
