/**
 * The Outlook add-in (docs/outlook-addin.md).
 *
 * Its files, public (Outlook loads them before anyone signs in):
 *   GET /addin/manifest.xml          the add-in-only XML manifest an admin deploys (?key= for key-only mode)
 *   GET /addin/commands.html         the runtime page (Office.js, then launchevent.js)
 *   GET /addin/launchevent.js        the event handlers, with this deployment's settings first
 *   GET /addin/icon-{16,32,64,80,128}.png, /addin/support.html
 *
 * Its signature fetch, for a signed-in user (Entra token) or an add-in key:
 *   GET /v1/addin/signature?email=ADDR[&platform=web|windows|mac|ios|android&client_version=V][&problem=P&problem_at=T]
 * answers the address's signature as each variant and the workspace's own domains, with an ETag;
 * If-None-Match with the current ETag answers 304. Either answer records the client's platform and
 * version and moves the address's add-in-mode installations to `installed` (src/addin/clients.ts).
 * `problem` is why the add-in last failed to insert a signature as it should; it is logged (warn,
 * with the address, platform and client version) for whoever looks into that mailbox.
 * Limited to RATE_LIMIT_ADDIN requests a minute per signed-in user, or per key.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { ApiError, detail } from '../errors.ts';
import { mayUse, resolveCaller, type Caller } from '../addin/callers.ts';
import { clientVersionOf, platformOf, recordFetch } from '../addin/clients.ts';
import { ADDIN_DIR, ADDIN_KEY_PATTERN, buildManifest, ICON_SIZES, runtimePage, servedHandler } from '../addin/manifest.ts';
import { addinBodyJson, addinSignature } from '../addin/signatures.ts';
import { cleanLiteral } from '../text.ts';
import { singleLine } from '../render/escape.ts';
import { bearerToken } from './auth.ts';
import { rateLimited } from './rateLimits.ts';

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

/** The strict policy of the add-in's pages: scripts from this origin and Office.js's CDN only. */
const PAGE_CSP = "default-src 'none'; script-src 'self' https://appsforoffice.microsoft.com; connect-src 'self'; img-src 'self'; style-src 'self'; base-uri 'none'; form-action 'none'";

/** The key of key-only mode, from a file URL's query; anything not shaped like a key is ignored. */
function keyParam(q: unknown): string | undefined {
  const key = (q as { key?: unknown }).key;
  return typeof key === 'string' && ADDIN_KEY_PATTERN.test(key) ? key : undefined;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*');
}

async function fileRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  const page = (reply: FastifyReply, body: string) =>
    reply.header('content-type', 'text/html; charset=utf-8').header('content-security-policy', PAGE_CSP).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').send(body);
  server.get('/addin/manifest.xml', async (req, reply) => {
    const { xml } = buildManifest(app.config, { key: keyParam(req.query) });
    return reply.header('content-type', 'application/xml; charset=utf-8').header('cache-control', 'no-cache').send(xml);
  });
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
    server.get(`/addin/icon-${size}.png`, async (_req, reply) => reply.header('content-type', 'image/png').header('cache-control', 'public, max-age=86400').send(png));
  }
}

export async function addinRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  await fileRoutes(server, app);
  const origin = new URL(app.config.PUBLIC_BASE_URL).origin;
  await server.register(
    async (scope) => {
      scope.addHook('onRequest', async (req, reply) => {
        // The add-in's runtime is served from this origin; classic Outlook's JavaScript runtime asks across origins.
        reply.header('access-control-allow-origin', origin).header('vary', 'Origin, Authorization');
        if (req.method === 'OPTIONS') return;
        req.addinCaller = await resolveCaller(app, bearerToken(req));
      });
      if (app.config.RATE_LIMIT_ADDIN > 0) {
        await scope.register(rateLimit, {
          max: app.config.RATE_LIMIT_ADDIN,
          timeWindow: 60_000,
          hook: 'preHandler',
          keyGenerator: (req) => req.addinCaller?.limitKey ?? `ip:${req.ip}`,
          errorResponseBuilder: (_req, ctx) => rateLimited(`Too many signature fetches: at most ${ctx.max} per minute for one user or add-in key.`, ctx.ttl),
        });
      }
      scope.options('/addin/signature', { config: { rateLimit: false }, schema: { hide: true } }, async (_req, reply) =>
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
          req.log.warn({ workspaceId: caller.workspaceId, email: q.data.email, ...client, problem, problem_at: q.data.problem_at ?? null }, 'the Outlook add-in reported a problem');
        }
        const s = await addinSignature(app, caller.workspaceId, q.data.email);
        if (caller.mode === 'token' && !(await mayUse(app, caller.user, s.email))) {
          throw new ApiError(403, 'authentication_error', 'address_not_allowed', 'The signed-in user may not sign as this address: it is neither theirs nor a shared mailbox of the workspace.');
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
