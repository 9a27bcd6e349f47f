/**
 * GET /help/remediation: the remediation guide (docs/remediation.md) as an HTML page, where the
 * `dashboard_url` of what the console has no page for yet points (src/dashboard.ts). The Markdown is
 * rendered once, when the server starts, with `marked` (a dependency for this); each section's
 * heading gets its name as its id, so that `#teammates`, `#event-tracking`, ... open it. The page is
 * served under the console's Content-Security-Policy and stylesheet; the Markdown is the project's
 * own file, and the policy lets no script run whatever it held.
 */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { Marked } from 'marked';
import type { AppContext } from '../context.ts';
import { REMEDIATION_PATH } from '../dashboard.ts';
import { escapeText } from '../render/escape.ts';
import { consoleCsp } from './console.ts';

/** A heading's id: its text in lower case, words joined by hyphens (the guide's headings are written so). */
export function headingId(text: string): string {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9\s-]/g, '')
    .replace(/\s+/g, '-');
}

/** The guide as a whole HTML page. */
export function remediationPage(markdown: string): string {
  const marked = new Marked({
    renderer: {
      heading({ tokens, depth, text }) {
        return `<h${depth} id="${escapeText(headingId(text))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
    },
  });
  const body = marked.parse(markdown, { async: false });
  const title = /^# (.+)$/m.exec(markdown)?.[1] ?? 'Remediation';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(title)} · sigsync</title>
<link rel="stylesheet" href="/console/static/console.css">
</head>
<body>
<main id="main" class="narrow help">
${body}
<p class="muted"><a href="/console/integrations">The console</a></p>
</main>
</body>
</html>
`;
}

export async function helpRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  const html = remediationPage(await readFile(new URL('../../docs/remediation.md', import.meta.url), 'utf8'));
  const csp = consoleCsp(app.config.PUBLIC_BASE_URL);
  server.get(REMEDIATION_PATH, async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(html),
  );
}
