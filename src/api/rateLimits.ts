/**
 * Rate limits of the /v1 API (@fastify/rate-limit), per API key, in a fixed window of one minute.
 *
 *   RATE_LIMIT_API      600  every /v1 request without a limit of its own
 *   RATE_LIMIT_PUBLISH   60  POST /v1/signatures/{id}/publish, and the variant publish (each its own)
 *   RATE_LIMIT_INSTALL   10  POST /v1/signatures/{id}/install (a forced re-install of every mailbox)
 *   RATE_LIMIT_SYNC      20  POST /v1/integrations/sync
 *
 * 0 turns a limit off. A request over the limit answers 429 with `Retry-After` (seconds) and the
 * error body `{error: {type: rate_limit_error, code: rate_limited, message}}`; every limited route
 * also sends `x-ratelimit-limit`, `x-ratelimit-remaining` and `x-ratelimit-reset`.
 *
 * The counters are kept in memory by each API process: behind N processes a key gets up to N times
 * the limit. The check runs after authentication (the key is known) and before the body is read, so
 * a limited client costs no body parsing or validation. The key is counted by its sha256, as stored;
 * the console counts by its session cookie the same way.
 */
import crypto from 'node:crypto';
import rateLimit, { type RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Config } from '../config.ts';
import { bearerToken, sessionToken, type FailureLimit } from './auth.ts';
import { ApiError } from '../errors.ts';

const WINDOW_MS = 60_000;

export type RateLimitGroup = 'publish' | 'install' | 'sync';

type LimitConfig = Pick<Config, 'RATE_LIMIT_API' | 'RATE_LIMIT_PUBLISH' | 'RATE_LIMIT_INSTALL' | 'RATE_LIMIT_SYNC'>;

const SETTING: Record<RateLimitGroup, keyof LimitConfig> = { publish: 'RATE_LIMIT_PUBLISH', install: 'RATE_LIMIT_INSTALL', sync: 'RATE_LIMIT_SYNC' };

const keyOf =
  (publicBaseUrl: string) =>
  (req: FastifyRequest): string => {
    const token = bearerToken(req) ?? sessionToken(req, publicBaseUrl);
    return token ? crypto.createHash('sha256').update(token).digest('base64url') : `ip:${req.ip}`;
  };

/** The route `config` that gives a route its group's limit (or none, when the setting is 0). */
export function rateLimitFor(config: LimitConfig, group: RateLimitGroup): { rateLimit: RateLimitOptions | false } {
  const max = config[SETTING[group]];
  return { rateLimit: max > 0 ? { max, timeWindow: WINDOW_MS, groupId: group } : false };
}

/** Registers the limiter in the /v1 scope, before its routes. */
export async function registerRateLimits(v1: FastifyInstance, config: LimitConfig & Pick<Config, 'PUBLIC_BASE_URL'>): Promise<void> {
  await v1.register(rateLimit, {
    global: config.RATE_LIMIT_API > 0,
    max: config.RATE_LIMIT_API,
    timeWindow: WINDOW_MS,
    hook: 'preParsing',
    keyGenerator: keyOf(config.PUBLIC_BASE_URL),
    errorResponseBuilder: (_req, ctx) => rateLimited(`Too many requests with this API key: at most ${ctx.max} per minute here.`, ctx.ttl),
  });
}

/**
 * Limits every route of `scope` to `max` requests a minute per client address (none when `max` is
 * 0); past it, 429 saying `what` was limited. For the public routes outside /v1 (tracked links and
 * images), where there is no API key to count by.
 */
export async function limitPerAddress(scope: FastifyInstance, max: number, what: string): Promise<void> {
  if (max <= 0) return;
  await scope.register(rateLimit, {
    max,
    timeWindow: WINDOW_MS,
    keyGenerator: (req) => req.ip,
    errorResponseBuilder: (_req, ctx) => rateLimited(what, ctx.ttl),
  });
}

/**
 * A counter of the rate-limit plugin's store (a fixed window of one minute, bounded in memory), to
 * be asked from any hook: `count` adds one and answers whether the client is over `max`; `over`
 * only looks. Built in a scope of its own so that it holds its own store.
 */
export interface Counter {
  max: number;
  what: string;
  count(req: FastifyRequest): Promise<Verdict>;
  over(req: FastifyRequest): Promise<Verdict>;
}

export interface Verdict {
  exceeded: boolean;
  max: number;
  remaining: number;
  ttl: number;
}

/** A counter of `max` a minute per `key` (null when `max` is 0: no limit). */
export async function counter(server: FastifyInstance, max: number, what: string, key: (req: FastifyRequest) => string): Promise<Counter | null> {
  if (max <= 0) return null;
  let check: ReturnType<FastifyInstance['createRateLimit']> | undefined;
  await server.register(async (scope) => {
    await scope.register(rateLimit, { global: false });
    check = scope.createRateLimit({ max, timeWindow: WINDOW_MS, keyGenerator: key });
  });
  const verdict = async (req: FastifyRequest, increment: boolean): Promise<Verdict> => {
    const r = await check!(req, { increment });
    if (r.isAllowed) return { exceeded: false, max, remaining: max, ttl: 0 };
    // `read` reports the count so far: one more request is over the limit once the count is `max`.
    return { exceeded: increment ? r.isExceeded : r.max - r.remaining >= max, max, remaining: r.remaining, ttl: r.ttl };
  };
  return { max, what, count: (req) => verdict(req, true), over: (req) => verdict(req, false) };
}

function limitHeaders(reply: FastifyReply, v: Verdict, exceeded: boolean): void {
  reply
    .header('x-ratelimit-limit', v.max)
    .header('x-ratelimit-remaining', exceeded ? 0 : v.remaining)
    .header('x-ratelimit-reset', Math.max(1, Math.ceil(v.ttl / 1000)));
  if (exceeded) reply.header('retry-after', Math.max(1, Math.ceil(v.ttl / 1000)));
}

/**
 * An onRequest hook that counts the request against every counter in turn and answers 429 at the
 * first one it is over (the later ones are not counted for it). Unlike the plugin's own route
 * limits, of which only the first that runs on a request counts it, every counter here counts.
 * The `x-ratelimit-*` headers are those of the counter with the fewest requests left.
 */
export function enforce(...counters: (Counter | null)[]): onRequestAsyncHookHandler {
  const active = counters.filter((c): c is Counter => c !== null);
  return async (req, reply) => {
    let tightest: Verdict | undefined;
    for (const c of active) {
      const v = await c.count(req);
      if (v.exceeded) {
        limitHeaders(reply, v, true);
        throw rateLimited(c.what, v.ttl);
      }
      if (!tightest || v.remaining < tightest.remaining) tightest = v;
    }
    if (tightest) limitHeaders(reply, tightest, false);
  };
}

/** RATE_LIMIT_AUTH_FAILURES: 401s per client address a minute; past it, 429 before a key is looked up. */
export async function authFailureLimit(server: FastifyInstance, max: number): Promise<FailureLimit | null> {
  const failures = await counter(server, max, 'Too many requests without a valid API key from this address.', (req) => req.ip);
  if (!failures) return null;
  return {
    async refuseOverLimit(req, reply) {
      const v = await failures.over(req);
      if (!v.exceeded) return;
      limitHeaders(reply, v, true);
      throw rateLimited(failures.what, v.ttl);
    },
    async failed(req) {
      await failures.count(req);
    },
  };
}

/** The 429 body of a rate limit: what was limited, and when to try again (`ttl`: ms until the window ends). */
export function rateLimited(what: string, ttl: number): ApiError {
  return new ApiError(429, 'rate_limit_error', 'rate_limited', `${what} Retry in ${Math.max(1, Math.ceil(ttl / 1000))} s.`);
}
