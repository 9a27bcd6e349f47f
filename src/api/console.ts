/**
 * The console: pages for people, served under /console. The pages are one HTML shell and plain
 * JavaScript modules (src/console/static, no build step) that read the /v1 API with the session
 * cookie as auth (src/api/auth.ts), plus the few console reads and actions the public API has no
 * route for, under /console/api (same session, same CSRF rule).
 *
 *   GET|POST /console/sign-in, POST /console/sign-out   consoleSignIn.ts (same-origin posts only)
 *   GET  /console[/page[/id]]      the shell (401 page with how to sign in, without a session)
 *   GET  /console/static/<file>    the modules, the stylesheet, uPlot
 *   GET  /console/api/session      the workspace and the CSRF token of the session
 *   GET  /console/api/integrations/:id        one integration and its last sync runs
 *   POST /console/api/integrations/:id/sync   sync now
 *   /console/api/mailboxes...                  search, one mailbox, replay (consoleMailboxes.ts)
 *   POST /console/api/installations/retry     retry failed installations (consoleInstallations.ts)
 *   /console/api/webhooks...                   endpoints, deliveries, redeliver (consoleWebhooks.ts)
 *
 * A cookie that opens no session counts as a failed sign-in (RATE_LIMIT_AUTH_FAILURES per address,
 * as failed API keys do). Each action (a POST under /console/api) counts against
 * RATE_LIMIT_CONSOLE_ACTIONS per session and is recorded in the audit trail with the session's person.
 *
 * Every answer carries a strict Content-Security-Policy (scripts only from this origin, no inline
 * script or style element, no framing) and no-store caching for the pages.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { ConsoleSession } from '../console/sessions.ts';
import { DIRECTORY_CATEGORIES } from '../domain.ts';
import { ApiError } from '../errors.ts';
import { getIntegration } from '../integrations/integrations.ts';
import { startRuns } from '../integrations/syncRuns.ts';
import { recentRuns } from '../integrations/queries.ts';
import { getWorkspace } from '../db/workspaces.ts';
import { checkCsrf, sessionOf, type FailureLimit } from './auth.ts';
import { counter, enforce } from './rateLimits.ts';
import { auditConsole, html, HOW_TO_SIGN_IN, page, signInRoutes } from './consoleSignIn.ts';
import { consoleMailboxRoutes } from './consoleMailboxes.ts';
import { consoleWebhookRoutes } from './consoleWebhooks.ts';
import { consoleInstallationRoutes } from './consoleInstallations.ts';
import { integrationView, syncRunView } from './v1/integrations.ts';
import { SOCIAL_ICON_BASE_URL } from '../render/social.ts';

/**
 * The console's Content-Security-Policy. A preview shows the signature's images from the hosts the
 * service knows: its own public base URL (assets, profile photos) and the social icons' host. Images
 * held anywhere else are not fetched; the tracked view image is blanked before (previewHtml).
 */
export function consoleCsp(publicBaseUrl: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // The signature previews (sandboxed srcdoc frames, which inherit this policy) are email HTML, styled
    // by style attributes: those are allowed, style elements and style sheets from elsewhere are not.
    "style-src-attr 'unsafe-inline'",
    `img-src 'self' data: ${new URL(publicBaseUrl).origin} ${new URL(SOCIAL_ICON_BASE_URL).origin}`,
    "connect-src 'self'",
    "frame-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The pages of the console (each a module in src/console/static). */
export const CONSOLE_PAGES = ['integrations', 'mailboxes', 'analytics', 'experiments', 'privacy', 'signatures', 'webhooks', 'activity'] as const;

const STATIC_DIR = fileURLToPath(new URL('../console/static/', import.meta.url));
const UPLOT_DIR = path.join(path.dirname(fileURLToPath(import.meta.resolve('uplot'))), '');
const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
/** The files served under /console/static: the console's own, and uPlot's ES module and stylesheet. */
function staticFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of fs.readdirSync(STATIC_DIR)) if (TYPES[path.extname(f)]) files.set(f, path.join(STATIC_DIR, f));
  files.set('vendor/uPlot.esm.js', path.join(UPLOT_DIR, 'uPlot.esm.js'));
  files.set('vendor/uPlot.min.css', path.join(UPLOT_DIR, 'uPlot.min.css'));
  return files;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RUNS_SHOWN = 10;

/** What a page's module imports, fetched with the shell instead of one after another. */
const PRELOADS: Partial<Record<(typeof CONSOLE_PAGES)[number], string[]>> = { analytics: ['vendor/uPlot.esm.js'], experiments: ['experimentForm.js'] };

/** The shell every console page loads: navigation, a main landmark, and the page's module (preloaded). */
function shell(page: (typeof CONSOLE_PAGES)[number]): string {
  const preload = ['lib.js', 'locale.js', `${page}.js`, ...(PRELOADS[page] ?? [])]
    .map((f) => `<link rel="modulepreload" href="/console/static/${f}">`)
    .join('\n');
  const nav = CONSOLE_PAGES.map((p) => `<li><a href="/console/${p}" data-page="${p}">${p[0]!.toUpperCase()}${p.slice(1)}</a></li>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sigsync console</title>
<link rel="stylesheet" href="/console/static/vendor/uPlot.min.css">
<link rel="stylesheet" href="/console/static/console.css">
<script type="module" src="/console/static/app.js"></script>
${preload}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<span class="brand">sigsync</span>
<nav aria-label="Console"><ul>${nav}</ul></nav>
<span id="workspace" class="workspace"></span>
<button type="button" id="sign-out">Sign out</button>
</header>
<main id="main" tabindex="-1">
<h1 id="title">Loading…</h1>
<div id="content" aria-live="polite"></div>
</main>
</body>
</html>
`;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession?: ConsoleSession;
  }
}

/** Console-only reads and actions: session cookie and CSRF token, scoped to the session's workspace. */
async function consoleApi(api: FastifyInstance, app: AppContext, failures: FailureLimit | null): Promise<void> {
  api.decorateRequest('workspaceId', '');
  const actions = await counter(
    api,
    app.config.RATE_LIMIT_CONSOLE_ACTIONS,
    'Too many console actions in this session.',
    (req) => req.consoleSession?.id ?? req.ip,
  );
  const limitActions = enforce(actions);
  api.addHook('onRequest', async (req, reply) => {
    const session = await sessionOf(app, req, failures, reply);
    if (!session) throw ApiError.unauthorized('Sign in to the console: sigsync console link --workspace ID --as ADDRESS prints a sign-in link.');
    checkCsrf(req, session);
    req.consoleSession = session;
    req.workspaceId = session.workspaceId;
    if (req.method === 'POST') await limitActions.call(api, req, reply);
  });

  api.get('/session', async (req) => {
    const workspace = await getWorkspace(app.pool, req.workspaceId);
    return { data: { workspace, csrf_token: req.consoleSession!.csrfToken, expires_at: req.consoleSession!.expiresAt } };
  });

  api.get('/integrations/:id', async (req) => {
    const { id } = req.params as { id: string };
    const integration = UUID.test(id) ? await getIntegration(app.pool, req.workspaceId, id) : undefined;
    if (!integration) throw ApiError.notFound('integration');
    const runs = await recentRuns(app.pool, req.workspaceId, integration, RUNS_SHOWN);
    return {
      data: {
        integration: integrationView(integration, app.config.PUBLIC_BASE_URL),
        syncable: DIRECTORY_CATEGORIES.includes(integration.category),
        runs: runs.map(syncRunView),
      },
    };
  });

  consoleMailboxRoutes(api, app);
  consoleWebhookRoutes(api, app);
  await consoleInstallationRoutes(api, app);

  api.post('/integrations/:id/sync', async (req, reply) => {
    const { id } = req.params as { id: string };
    const integration = UUID.test(id) ? await getIntegration(app.pool, req.workspaceId, id) : undefined;
    if (!integration) throw ApiError.notFound('integration');
    if (!DIRECTORY_CATEGORIES.includes(integration.category))
      throw new ApiError(422, 'invalid_request_error', 'not_a_directory', 'Only directory integrations sync.');
    if (integration.status === 'access_lost')
      throw new ApiError(422, 'invalid_request_error', 'integration_access_lost', 'The integration has lost access; reconnect it first.');
    const started = await startRuns(app.pool, req.workspaceId, [id], { trigger: 'api' });
    if (!started.length) throw new ApiError(409, 'conflict_error', 'sync_already_running', 'A sync of this integration is running.');
    await auditConsole(app, req, { action: 'integration.sync', targetKind: 'integration', target: id, details: { sync_run_ids: started.map((r) => r.id) } });
    return reply.status(202).send({ data: started.map((r) => ({ id: r.id, status: r.status, started_at: r.started_at })) });
  });
}

export async function consoleRoutes(server: FastifyInstance, app: AppContext, failures: FailureLimit | null = null): Promise<void> {
  const files = staticFiles();
  const csp = consoleCsp(app.config.PUBLIC_BASE_URL);
  await server.register(
    async (scope) => {
      scope.decorateRequest('consoleSession', undefined);
      scope.addHook('onSend', async (_req, reply) => {
        reply.header('content-security-policy', csp);
        reply.header('x-content-type-options', 'nosniff');
        reply.header('referrer-policy', 'no-referrer');
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      });
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });

      await signInRoutes(scope, app, failures);

      scope.get('/static/*', async (req, reply) => {
        const file = files.get((req.params as { '*': string })['*']);
        if (!file) return reply.status(404).send(new ApiError(404, 'not_found_error', 'route_not_found', 'No such file.').toBody());
        return reply
          .header('content-type', TYPES[path.extname(file)]!)
          .header('cache-control', 'no-cache')
          .send(await fs.promises.readFile(file));
      });

      const servePage = (p: (typeof CONSOLE_PAGES)[number]) => async (req: FastifyRequest, reply: FastifyReply) => {
        if (!(await sessionOf(app, req, failures, reply))) return html(reply, 401, page('Sign in to the console', HOW_TO_SIGN_IN));
        return html(reply, 200, shell(p));
      };
      scope.get('/', async (_req, reply) => reply.redirect('/console/integrations', 303));
      for (const p of CONSOLE_PAGES) {
        scope.get(`/${p}`, servePage(p));
        scope.get(`/${p}/:id`, servePage(p));
      }

      await scope.register(async (api) => consoleApi(api, app, failures), { prefix: '/api' });
    },
    { prefix: '/console' },
  );
}
