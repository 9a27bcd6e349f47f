/**
 * The sandbox's Outlook compose-window demo: a page that plays Outlook's compose window with the
 * add-in's real handler file, as the service serves it (/addin/launchevent.js, key-only mode with the
 * sandbox's add-in key), running under the stand-in Office runtime (outlook/office.js, which the
 * add-in's browser test runs too). Type an internal and an external recipient, switch From to the
 * shared mailbox, reply: the add-in puts the variant it picks in the body, and the page names it.
 *
 *   GET /sandbox/outlook              the page (503 while the sandbox workspace is not seeded yet)
 *   GET /sandbox/outlook/office.js    the stand-in Office runtime
 *   GET /sandbox/outlook/compose.js   the page's script (outlook/compose.js)
 *   GET /sandbox/outlook/compose.css  its styles
 *
 * Sandbox mode only: `serve` adds these routes to the server when the sandbox runs (demo.ts,
 * sandboxServerRoutes); a production server never has them. The page's policy is as strict as the
 * console's: scripts and styles from this origin only, nothing inline but the signature's own style
 * attributes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import type { ServerRoutes } from '../api/server.ts';
import { escapeAttr, escapeText } from '../render/escape.ts';
import { SOCIAL_ICON_BASE_URL } from '../render/social.ts';

export const OUTLOOK_DEMO_PATH = '/sandbox/outlook';

/** Who the demo composes as, and the addresses it suggests. */
export interface OutlookDemoSetup {
  /** The sandbox's add-in key (key-only mode), with which the served handler fetches. */
  key: string;
  /** The signed-in user (Outlook's user profile) and the From address at first. */
  user: string;
  /** A shared mailbox the user may switch From to. */
  shared: string;
  /** A recipient inside the workspace's domains, and one outside. */
  internal: string;
  external: string;
}

const DIR = path.join(import.meta.dirname, 'outlook');
const FILES = {
  'office.js': 'text/javascript; charset=utf-8',
  'compose.js': 'text/javascript; charset=utf-8',
  'compose.css': 'text/css; charset=utf-8',
} as const;

/**
 * The page's policy: the console's, with the service's own origin for the signature's images (and the social icons' host, as in the console) and the
 * add-in's fetch.
 */
function policy(origin: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // The signature is email HTML, styled by style attributes.
    "style-src-attr 'unsafe-inline'",
    `img-src 'self' data: ${origin} ${new URL(SOCIAL_ICON_BASE_URL).origin}`,
    `connect-src 'self' ${origin}`,
    "form-action 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function outlookDemoPage(setup: OutlookDemoSetup): string {
  const data = (name: string, value: string) => `data-${name}="${escapeAttr(value)}"`;
  const option = (address: string, note: string) => `<option value="${escapeAttr(address)}">${escapeText(address)} (${escapeText(note)})</option>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>New message · the Outlook add-in in the sigsync sandbox</title>
<link rel="stylesheet" href="${OUTLOOK_DEMO_PATH}/compose.css">
</head>
<body>
<main id="outlook" ${data('user', setup.user)} ${data('shared', setup.shared)} ${data('internal', setup.internal)} ${data('external', setup.external)}>
<p class="note">A stand-in for Outlook's compose window. The add-in's own handlers (<code>/addin/launchevent.js</code>, as Outlook loads them) run here under a stand-in for Office.js, and fetch each signature from this service.</p>
<div class="toolbar" role="toolbar" aria-label="Compose">
<button type="button" id="new-mail">New message</button>
<button type="button" id="reply">Reply to ${escapeText(setup.external)}</button>
<button type="button" id="forward">Forward</button>
</div>
<div class="field"><label for="from">From</label>
<select id="from">${option(setup.user, 'you')}${option(setup.shared, 'shared mailbox')}</select></div>
<div class="field"><label for="to">To</label>
<ul id="recipients" aria-label="Recipients"></ul>
<input id="to" type="email" autocomplete="off" placeholder="type an address, then Enter"></div>
<p class="hint">Try <button type="button" class="suggest" ${data('address', setup.internal)}>${escapeText(setup.internal)}</button> (inside the workspace) and
<button type="button" class="suggest" ${data('address', setup.external)}>${escapeText(setup.external)}</button> (outside).</p>
<div class="field"><label for="subject">Subject</label><input id="subject" value="Hello"></div>
<div class="body" aria-label="Message body"><p>Hi,</p><p>…</p><div id="compose-body"></div></div>
<section class="status" aria-live="polite">
<p>Signature in the body: <strong id="inserted-kind">none yet</strong> <span id="inserted-detail"></span></p>
<ol id="events" reversed></ol>
</section>
</main>
<script src="${OUTLOOK_DEMO_PATH}/office.js"></script>
<script src="/addin/launchevent.js?key=${encodeURIComponent(setup.key)}"></script>
<script src="${OUTLOOK_DEMO_PATH}/compose.js"></script>
</body>
</html>
`;
}

/** The demo's routes; `setup` answers undefined until the sandbox workspace is seeded. */
export function outlookDemoRoutes(setup: () => OutlookDemoSetup | undefined): ServerRoutes {
  return async (server, app) => {
    const origin = new URL(app.config.PUBLIC_BASE_URL).origin;
    const send = (reply: FastifyReply, status: number, type: string, body: string | Buffer) =>
      reply
        .status(status)
        .header('content-type', type)
        .header('content-security-policy', policy(origin))
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-cache')
        .send(body);
    server.get(OUTLOOK_DEMO_PATH, async (_req, reply) => {
      const s = setup();
      if (!s)
        return send(
          reply,
          503,
          'text/html; charset=utf-8',
          '<!doctype html><html lang="en"><title>Not ready</title><p>The sandbox workspace is still being seeded: reload in a moment.</p></html>\n',
        );
      return send(reply, 200, 'text/html; charset=utf-8', outlookDemoPage(s));
    });
    for (const [file, type] of Object.entries(FILES)) {
      const body = fs.readFileSync(path.join(DIR, file));
      server.get(`${OUTLOOK_DEMO_PATH}/${file}`, async (_req, reply) => send(reply, 200, type, body));
    }
  };
}
