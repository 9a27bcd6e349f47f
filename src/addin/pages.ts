/**
 * What the service serves for Outlook to load, beside the manifest: the headers of the add-in's
 * pages and the well-known file classic Outlook for Windows reads (docs/outlook-addin.md).
 */
import type { Config } from '../config.ts';

/**
 * The policy of the add-in's pages (commands.html, support.html): scripts from this origin, and from
 * Microsoft exactly what office.js loads: its own files under /lib/1/hosted/ on
 * appsforoffice.microsoft.com (office.js, the Outlook host's file, its locale strings) and
 * MicrosoftAjax.js, which the Outlook host files load from ajax.aspnetcdn.com. Nothing else runs.
 * test/addin/officeJs.test.ts runs Microsoft's office.js under it as each Outlook client announces itself.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self' https://appsforoffice.microsoft.com/lib/1/hosted/ https://ajax.aspnetcdn.com/ajax/3.5/MicrosoftAjax.js",
  "connect-src 'self'",
  "img-src 'self'",
  "style-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Where classic Outlook for Windows looks for the handlers this origin allows. */
export const ALLOWED_HANDLERS_PATH = '/.well-known/microsoft-officeaddins-allowed.json';

/**
 * The well-known file classic Outlook for Windows reads before it lets an event handler make a
 * cross-origin request or ask for a single sign-on token: `{"allowed": [the handler's URL]}`
 * (https://learn.microsoft.com/office/dev/add-ins/outlook/use-sso-in-event-based-activation). It
 * lists the handler as the single sign-on manifest names it; a key-only manifest's URL carries the
 * add-in key, which a public file must not show (docs/outlook-addin.md).
 */
export function allowedHandlers(config: Pick<Config, 'PUBLIC_BASE_URL'>): string {
  return JSON.stringify({ allowed: [`${config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/addin/launchevent.js`] });
}
