/**
 * The console's sign-in and sign-out (src/api/console.ts registers them under /console):
 *
 *   GET  /console/sign-in?token=   a page with one button that redeems the link (a GET never
 *                                  spends it, so a link preview or prefetch cannot)
 *   POST /console/sign-in          redeems the one-time link, sets the session cookie, 303 to the pages
 *   POST /console/sign-out         ends the session on the server and clears the cookie
 *
 * Both posts are accepted only from the console's own pages (`crossSiteReason`): an attacker's page
 * cannot sign a victim's browser into the attacker's workspace (login CSRF) nor sign it out. The
 * cookie is `__Host-sigsync_console`, Secure, when PUBLIC_BASE_URL is https, and the plain
 * `sigsync_console` on a loopback http base URL: PUBLIC_BASE_URL decides, never the Host header.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { endSession, redeemSignInLink, SESSION_TTL_MS, sessionActor } from '../console/sessions.ts';
import { recordAudit, type AuditAction } from '../db/audit.ts';
import { ApiError } from '../errors.ts';
import { escapeText } from '../render/escape.ts';
import { checkCsrf, sessionCookieName, sessionOf, type FailureLimit } from './auth.ts';
import { limitPerAddress } from './rateLimits.ts';

const SIGN_IN_ROUTE_LIMIT = 30;
const LINK_TOKEN = /^sgl_[A-Za-z0-9]{43}$/;
const LOOPBACK_HTTP_ORIGIN = /^http:\/\/(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])(:\d{1,5})?$/i;

export const HOW_TO_SIGN_IN =
  '<p>Ask for a sign-in link on the machine that runs the service:</p>\n<pre><code>sigsync console link --workspace WORKSPACE_ID --as YOUR_ADDRESS</code></pre>\n<p>A link opens one session, once, within 15 minutes.</p>';

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)} · sigsync console</title>
<link rel="stylesheet" href="/console/static/console.css">
</head>
<body>
<main id="main" class="narrow">
<h1>${escapeText(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.status(status).header('content-type', 'text/html; charset=utf-8').send(body);
}

/** The Set-Cookie value of a session (or of its removal): HttpOnly, SameSite=Strict; `__Host-` and Secure when PUBLIC_BASE_URL is https. */
export function sessionCookie(publicBaseUrl: string, value: string, maxAgeS: number): string {
  const name = sessionCookieName(publicBaseUrl);
  const secure = name.startsWith('__Host-');
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
}

/**
 * Records a console action in the audit trail as the session's person, right after the action (a
 * sync started, a replay or a redelivery: work outside one transaction). The request passed the
 * console's session hook (src/api/console.ts), which set `consoleSession`.
 */
export async function auditConsole(app: AppContext, req: FastifyRequest, a: AuditAction): Promise<void> {
  await recordAudit(app.pool, req.workspaceId, sessionActor(req.consoleSession!), a);
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * Why a post is not from the console's own pages, or undefined when it is. A browser says where a
 * request comes from and a page cannot change it: `Sec-Fetch-Site` must be `same-origin`, and
 * `Origin` must be PUBLIC_BASE_URL's origin (or "null" beside `Sec-Fetch-Site: same-origin`: the
 * pages' no-referrer policy makes a browser send that); a post with neither is refused too. Without
 * PUBLIC_BASE_URL set (a local run on the default http://HOST:PORT), the origin may instead be the
 * loopback http origin the request was sent to (`http://localhost:3000` for a server on 127.0.0.1):
 * a name rebound to 127.0.0.1 by an attacker's DNS is no loopback origin.
 */
export function crossSiteReason(req: FastifyRequest, config: Pick<AppContext['config'], 'PUBLIC_BASE_URL' | 'publicBaseUrlSet'>): string | undefined {
  const site = one(req.headers['sec-fetch-site']);
  const origin = one(req.headers.origin);
  const expected = new URL(config.PUBLIC_BASE_URL).origin;
  if (site !== undefined && site !== 'same-origin')
    return `the browser says it came from ${site === 'none' ? 'no page' : `another site (Sec-Fetch-Site: ${site})`}`;
  if (origin === undefined) return site === undefined ? 'it carries neither Origin nor Sec-Fetch-Site' : undefined;
  // The console's pages send no referrer, so a browser writes its form posts' Origin as "null":
  // then its own Sec-Fetch-Site: same-origin says where the post came from.
  if (origin === 'null' && site === 'same-origin') return undefined;
  if (origin === expected) return undefined;
  if (!config.publicBaseUrlSet && LOOPBACK_HTTP_ORIGIN.test(origin) && origin.toLowerCase() === `http://${req.host}`.toLowerCase()) return undefined;
  return `it came from ${origin.slice(0, 200)}, not ${expected}`;
}

function crossSite(action: string, reason: string): ApiError {
  return new ApiError(403, 'authentication_error', 'cross_site_request', `${action} is accepted only from the console's own pages: ${reason}.`);
}

/** The sign-in routes (limited per address) and sign-out, in the /console scope. */
export async function signInRoutes(scope: FastifyInstance, app: AppContext, failures: FailureLimit | null): Promise<void> {
  const base = app.config.PUBLIC_BASE_URL;
  await scope.register(async (signIn) => {
    await limitPerAddress(signIn, SIGN_IN_ROUTE_LIMIT, 'Too many sign-in attempts from this address.');
    signIn.get('/sign-in', async (req, reply) => {
      const token = (req.query as { token?: unknown }).token;
      if (typeof token !== 'string' || !LINK_TOKEN.test(token))
        return html(reply, 400, page('Sign in', `<p>This is not a sign-in link.</p>\n${HOW_TO_SIGN_IN}`));
      return html(
        reply,
        200,
        page(
          'Sign in',
          `<form method="post" action="/console/sign-in">\n<input type="hidden" name="token" value="${token}">\n<p>This link opens a session of the sigsync console in this browser.</p>\n<button type="submit">Sign in</button>\n</form>`,
        ),
      );
    });
    signIn.post('/sign-in', async (req, reply) => {
      const refused = crossSiteReason(req, app.config);
      if (refused)
        return html(
          reply,
          403,
          page(
            'Sign-in refused',
            `<p>${escapeText(crossSite('Signing in', refused).message)}</p>\n<p>Open the sign-in link itself in this browser and press its button.</p>`,
          ),
        );
      await failures?.refuseOverLimit(req, reply);
      const token = (req.body as { token?: unknown } | undefined)?.token;
      const session = typeof token === 'string' ? await redeemSignInLink(app.pool, token) : undefined;
      if (!session) {
        await failures?.failed(req);
        return html(reply, 401, page('Sign-in link used or expired', `<p>A sign-in link works once, for 15 minutes.</p>\n${HOW_TO_SIGN_IN}`));
      }
      // A session this browser had before ends on the server: one browser, one live session.
      const previous = await sessionOf(app, req);
      if (previous) await endSession(app.pool, previous, 'replaced');
      reply.header('set-cookie', sessionCookie(base, session.token, Math.floor(SESSION_TTL_MS / 1000)));
      return reply.redirect('/console/integrations', 303);
    });
  });

  scope.post('/sign-out', async (req, reply) => {
    const refused = crossSiteReason(req, app.config);
    if (refused) throw crossSite('Signing out', refused);
    const session = await sessionOf(app, req, failures, reply);
    if (session) {
      checkCsrf(req, session);
      await endSession(app.pool, session);
    }
    reply.header('set-cookie', sessionCookie(base, '', 0));
    return reply.status(204).send();
  });
}
