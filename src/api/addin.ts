/**
 * The Outlook add-in (docs/outlook-addin.md).
 *
 * Its files, public (Outlook loads them before anyone signs in):
 *   GET /addin/manifest.xml          the add-in-only XML manifest an admin deploys (?key= for key-only mode);
 *                                    404 addin_not_configured when it could not sign in (no Entra app, no key)
 *   GET /addin/commands.html         the runtime page (Office.js, then launchevent.js)
 *   GET /addin/launchevent.js        the event handlers, with this deployment's settings first
 *   GET /addin/icon-{16,32,64,80,128}.png, /addin/support.html
 *   GET /.well-known/microsoft-officeaddins-allowed.json   the handler classic Outlook for Windows may run with CORS and SSO
 *
 * Its signature fetch, for a signed-in user (Entra token) or an add-in key:
 *   GET /v1/addin/signature?email=ADDR[&platform=web|windows|mac|ios|android&client_version=V][&problem=P&problem_at=T]
 * answers the address's signature as each variant and the workspace's own domains, with an ETag;
 * If-None-Match with the current ETag answers 304. Either answer records the client's platform and
 * version and moves the address's add-in-mode installations to `installed` (src/addin/clients.ts).
 * `problem` is why the add-in last failed to insert a signature as it should; it is logged (warn,
 * with the address, platform and client version) for whoever looks into that mailbox.
 * `If-None-Match: *` is not a version the client holds: it answers 200, never 304.
 *
 * Limits (a minute, per process), fair per client:
 * - every 401 counts against the client address (RATE_LIMIT_AUTH_FAILURES, the same counter as every
 *   other /v1 path); past it, 429 before the bearer is looked up;
 * - RATE_LIMIT_ADDIN fetches per signed-in user (tid + oid); in key-only mode, where everyone holds
 *   the same key, per key, client address and mailbox asked for, and ten times that per key and
 *   client address across mailboxes: a key holder exhausts their own buckets, not everyone's.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { ApiError, detail } from '../errors.ts';
import { mayUse, resolveCaller, type Caller } from '../addin/callers.ts';
import { clientVersionOf, platformOf, recordFetch } from '../addin/clients.ts';
import { ADDIN_DIR, ADDIN_KEY_PATTERN, buildManifest, cannotSignIn, ICON_SIZES, runtimePage, servedHandler } from '../addin/manifest.ts';
import { ALLOWED_HANDLERS_PATH, allowedHandlers, PAGE_CSP } from '../addin/pages.ts';
import { addinBodyJson, addinSignature } from '../addin/signatures.ts';
import { cleanLiteral } from '../text.ts';
import { singleLine } from '../render/escape.ts';
import { bearerToken } from './auth.ts';
import { counter, enforce } from './rateLimits.ts';
import type { FailureLimit } from './auth.ts';

declare module 'fastify' {
  interface FastifyRequest {
    addinCaller?: Caller;
  }
}

const query = z.object({
  email: z.email(),
  platform: z.string().optional(),
  client_version: z.string().optional(),
  // Why the add-in last failed to insert a signature as it should (launchevent.js, report): logged,
  // never refused (a malformed one is dropped, a long one cut).
  problem: z.string().optional().catch(undefined),
  problem_at: z.iso.datetime().optional().catch(undefined),
});
/** Characters of a reported problem that reach the log. */
const MAX_PROBLEM = 300;

/** The key of key-only mode, from a file URL's query; anything not shaped like a key is ignored. */
function keyParam(q: unknown): string | undefined {
  const key = (q as { key?: unknown }).key;
  return typeof key === 'string' && ADDIN_KEY_PATTERN.test(key) ? key : undefined;
}

/** Whether If-None-Match names the current ETag; `*` names no version, so it never matches. */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

/** Across mailboxes, a key and client address may fetch this many times the per-mailbox limit. */
const KEY_ADDRESS_FACTOR = 10;

/**
 * The fetch limits (see the top of this file) as a preHandler: a signed-in user is one bucket; an
 * add-in key is counted per client address and mailbox, and per client address.
 */
async function fetchLimits(scope: FastifyInstance, max: number): Promise<preHandlerAsyncHookHandler | undefined> {
  if (max <= 0) return undefined;
  // As asked (validated later), cut to an address's longest so that a bucket's key stays small.
  const mailbox = (req: FastifyRequest) =>
    String((req.query as { email?: unknown }).email ?? '')
      .slice(0, 320)
      .toLowerCase();
  const perCaller = await counter(
    scope,
    max,
    `Too many signature fetches: at most ${max} per minute for one signed-in user, or for one mailbox from one address with an add-in key.`,
    (req) => (req.addinCaller!.mode === 'key' ? `${req.addinCaller!.limitKey}:${req.ip}:${mailbox(req)}` : req.addinCaller!.limitKey),
  );
  const perAddress = await counter(
    scope,
    max * KEY_ADDRESS_FACTOR,
    `Too many signature fetches: at most ${max * KEY_ADDRESS_FACTOR} per minute from one address with an add-in key.`,
    (req) => `${req.addinCaller!.limitKey}:${req.ip}`,
  );
  const forUser = enforce(perCaller);
  const forKey = enforce(perCaller, perAddress);
  return async function (this: FastifyInstance, req, reply) {
    if (!req.addinCaller) return;
    await (req.addinCaller.mode === 'key' ? forKey : forUser).call(this, req, reply);
  };
}

async function fileRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  const page = (reply: FastifyReply, body: string) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', PAGE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(body);
  server.get('/addin/manifest.xml', async (req, reply) => {
    const key = keyParam(req.query);
    const refused = cannotSignIn(app.config, key);
    if (refused) throw new ApiError(404, 'not_found_error', 'addin_not_configured', `No manifest is served: ${refused}.`);
    const { xml } = buildManifest(app.config, { key });
    return reply.header('content-type', 'application/xml; charset=utf-8').header('cache-control', 'no-cache').send(xml);
  });
  const allowed = allowedHandlers(app.config);
  server.get(ALLOWED_HANDLERS_PATH, async (_req, reply) =>
    reply.header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-cache').send(allowed),
  );
  server.get('/addin/commands.html', async (req, reply) => page(reply, runtimePage({ key: keyParam(req.query) })));
  const support = fs.readFileSync(path.join(ADDIN_DIR, 'support.html'), 'utf8');
  server.get('/addin/support.html', async (_req, reply) => page(reply, support));
  server.get('/addin/launchevent.js', async (req, reply) => {
    const key = keyParam(req.query);
    return reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', key ? 'private, no-cache' : 'no-cache')
      .send(servedHandler(app.config, { key }));
  });
  for (const size of ICON_SIZES) {
    const png = fs.readFileSync(path.join(ADDIN_DIR, 'assets', `icon-${size}.png`));
    server.get(`/addin/icon-${size}.png`, async (_req, reply) =>
      reply.header('content-type', 'image/png').header('cache-control', 'public, max-age=86400').send(png),
    );
  }
}

export async function addinRoutes(server: FastifyInstance, app: AppContext, authFailures: FailureLimit | null = null): Promise<void> {
  await fileRoutes(server, app);
  const origin = new URL(app.config.PUBLIC_BASE_URL).origin;
  await server.register(
    async (scope) => {
      scope.addHook('onRequest', async (req, reply) => {
        // The add-in's runtime is served from this origin; classic Outlook's JavaScript runtime asks across origins.
        reply.header('access-control-allow-origin', origin).header('vary', 'Origin, Authorization');
        if (req.method === 'OPTIONS') return;
        // An address that failed too often is refused before its bearer is looked up, as on every /v1 path.
        await authFailures?.refuseOverLimit(req, reply);
        try {
          req.addinCaller = await resolveCaller(app, bearerToken(req));
        } catch (e) {
          if (e instanceof ApiError && e.status === 401) await authFailures?.failed(req);
          throw e;
        }
      });
      const limits = await fetchLimits(scope, app.config.RATE_LIMIT_ADDIN);
      if (limits) scope.addHook('preHandler', limits);
      scope.options('/addin/signature', { schema: { hide: true } }, async (_req, reply) =>
        reply
          .status(204)
          .header('access-control-allow-methods', 'GET')
          .header('access-control-allow-headers', 'Authorization, If-None-Match')
          .header('access-control-max-age', '600')
          .send(),
      );
      scope.get('/addin/signature', async (req, reply) => {
        const q = query.safeParse(req.query);
        if (!q.success) throw ApiError.validation([detail('email', 'invalid_email', 'email must be an email address.')]);
        const caller = req.addinCaller!;
        if (q.data.problem) {
          const client = { platform: platformOf(q.data.platform), client_version: clientVersionOf(q.data.client_version) };
          const problem = singleLine(cleanLiteral(q.data.problem)).slice(0, MAX_PROBLEM);
          req.log.warn(
            { workspaceId: caller.workspaceId, email: q.data.email, ...client, problem, problem_at: q.data.problem_at ?? null },
            'the Outlook add-in reported a problem',
          );
        }
        const s = await addinSignature(app, caller.workspaceId, q.data.email);
        if (caller.mode === 'token' && !(await mayUse(app, caller.user, s.email))) {
          throw new ApiError(
            403,
            'authentication_error',
            'address_not_allowed',
            'The signed-in user may not sign as this address: it is neither theirs nor a shared mailbox of the workspace.',
          );
        }
        await recordFetch(app, caller.workspaceId, s, { platform: platformOf(q.data.platform), version: clientVersionOf(q.data.client_version) });
        reply.header('etag', s.etag).header('cache-control', 'private, no-cache').header('access-control-expose-headers', 'ETag');
        if (matches(req.headers['if-none-match'], s.etag)) return reply.status(304).send();
        return reply.header('content-type', 'application/json; charset=utf-8').send(addinBodyJson(s, q.data.email));
      });
    },
    { prefix: '/v1' },
  );
}
