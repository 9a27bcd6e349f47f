/**
 * Microsoft's own office.js (npm @microsoft/office-js) loading the served runtime page in headless
 * Chromium, under the exact headers the service serves (its Content-Security-Policy included), as
 * each Outlook client that loads commands.html announces itself: office.js reads the host from the
 * page's `_host_Info` query parameter and loads that host's file (outlook-web-16.01.js, ...), which
 * loads MicrosoftAjax.js from ajax.aspnetcdn.com. The CDN's URLs are answered from the package's
 * files; MicrosoftAjax.js is not published on npm, so a stand-in answers for it with the members
 * office.js checks for. Nothing leaves the machine: every other request is refused and recorded.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../src/browser/chromium.ts';
import { LAUNCH_EVENTS } from '../../src/addin/manifest.ts';
import { useApi } from '../api/helpers.ts';

const BASE = 'https://signatures.acme.test';
const CLIENT_ID = '6f1c3c9e-8a51-4c2b-9d3e-2f0b6a7c1d45';
const OFFICE_JS = path.join(import.meta.dirname, '../../node_modules/@microsoft/office-js/dist');
const CDN = 'https://appsforoffice.microsoft.com/lib/1/hosted/';
const MS_AJAX = 'https://ajax.aspnetcdn.com/ajax/3.5/MicrosoftAjax.js';
/** What office.js's isMsAjaxLoaded looks for in MicrosoftAjax.js (outlook-web-16.01.js). */
const MS_AJAX_STAND_IN = `window.Type = Function;
Type.registerNamespace = function (ns) { var o = window; ns.split('.').forEach(function (p) { o = o[p] = o[p] || {}; }); };
Type.prototype.registerClass = function () { return this; };
Type.prototype.registerEnum = function () { return this; };
Type.prototype.registerInterface = function () { return this; };
Type.registerClass = Type.prototype.registerClass;
Function._validateParams = function () { return null; };
Function.createDelegate = function (o, f) { return function () { return f.apply(o, arguments); }; };
window.Sys = window.Sys || {};
Sys.StringBuilder = function () { this.parts = []; };
Sys.Debug = { trace: function () {}, assert: function () {}, fail: function () {} };
Sys.Serialization = { JavaScriptSerializer: { serialize: JSON.stringify, deserialize: JSON.parse } };
window.__msAjaxStandIn = true;`;

/**
 * The clients that load commands.html (classic Outlook for Windows runs launchevent.js alone), each
 * as it announces itself to office.js (`_host_Info`) and with the bridge office.js talks to it over:
 * Outlook on the web frames the page and answers window messages (here a page at outlook.office.com
 * that records them); Mac and iOS give it WebKit's message handlers, Android an `agaveHost` object
 * (here recorders). A bridge that received a message shows office.js got as far as asking Outlook
 * for its context.
 */
const HOSTS = [
  { client: 'Outlook on the web, new Outlook', hostInfo: 'Outlook$Web$16.01$en-US$$$$0', file: 'outlook-web-16.01.js', bridge: 'frame' },
  { client: 'Outlook for Mac', hostInfo: 'Outlook$Mac$16.00$en-US$$$$0', file: 'outlook-mac-16.00.js', bridge: 'webkit' },
  { client: 'Outlook on iOS', hostInfo: 'Outlook$iOS$16.00$en-US$$$$0', file: 'outlook-ios-16.00.js', bridge: 'webkit' },
  { client: 'Outlook on Android', hostInfo: 'Outlook$Android$16.00$en-US$$$$0', file: 'outlook-android-16.00.js', bridge: 'agaveHost' },
] as const;
const OUTLOOK_WEB = 'https://outlook.office.com/mail/';
/** Outlook on the web's side: a page that frames the add-in and keeps what it posts. */
const OUTLOOK_WEB_PAGE = (src: string) =>
  `<!doctype html><html><body><script>window.__bridge = []; addEventListener('message', function (e) { if (e.origin === ${JSON.stringify(new URL(BASE).origin)}) window.__bridge.push(String(e.data).slice(0, 200)); });</script><iframe name="addin" src="${src}"></iframe></body></html>`;

interface Load {
  violations: string[];
  pageErrors: string[];
  consoleErrors: string[];
  requested: string[];
  refused: string[];
  associated: string[];
  msAjax: boolean;
  /** What office.js sent to Outlook's side. */
  bridge: string[];
}

describe("Microsoft's office.js on the served runtime page", () => {
  const api = useApi({ PUBLIC_BASE_URL: BASE, ADDIN_ENTRA_CLIENT_ID: CLIENT_ID });
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  /** What office.js did in the page, as `host` loads it. */
  async function load(host: (typeof HOSTS)[number]): Promise<Load> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const seen: Load = { violations: [], pageErrors: [], consoleErrors: [], requested: [], refused: [], associated: [], msAjax: false, bridge: [] };
    const addinUrl = `${BASE}/addin/commands.html?_host_Info=${encodeURIComponent(host.hostInfo)}`;
    try {
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        seen.requested.push(url);
        if (url.startsWith(`${BASE}/`)) return route.fulfill({ response: await route.fetch({ url: api.base + url.slice(BASE.length) }) });
        if (url.startsWith(CDN)) {
          const file = path.join(OFFICE_JS, decodeURIComponent(new URL(url).pathname.slice('/lib/1/hosted/'.length)));
          if (file.startsWith(`${OFFICE_JS}/`) && fs.existsSync(file))
            return route.fulfill({ contentType: 'text/javascript', body: fs.readFileSync(file, 'utf8') });
          return route.fulfill({ status: 404, body: '' });
        }
        if (url === MS_AJAX) return route.fulfill({ contentType: 'text/javascript', body: MS_AJAX_STAND_IN });
        if (url === OUTLOOK_WEB)
          return route.fulfill({ contentType: 'text/html', body: OUTLOOK_WEB_PAGE(`${addinUrl}#&_xdm_Info=conv1$addin1$${OUTLOOK_WEB}`) });
        seen.refused.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      page.on('pageerror', (e) => seen.pageErrors.push(e.message));
      page.on('console', (m) => {
        if (m.type() === 'error') seen.consoleErrors.push(m.text());
      });
      // In every frame: policy violations and uncaught errors (Outlook on the web's add-in frame
      // included) are kept, and Mac's, iOS's or Android's bridge records what office.js sends.
      await page.addInitScript(`(() => {
        window.__violations = [];
        window.__bridge = [];
        addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
        addEventListener('error', (e) => window.__violations.push('error ' + e.message));
        const keep = (m) => window.__bridge.push(String(m).slice(0, 200));
        const bridge = ${JSON.stringify(host.bridge)};
        if (bridge === 'webkit') window.webkit = { messageHandlers: { Agave: { postMessage: keep } } };
        if (bridge === 'agaveHost') window.agaveHost = { postMessage: keep };
      })()`);
      await page.goto(host.bridge === 'frame' ? OUTLOOK_WEB : addinUrl);
      const addin = host.bridge === 'frame' ? page.frame({ name: 'addin' })! : page.mainFrame();
      // Until office.js has asked Outlook for its context, or something went wrong on the way.
      const state = () => {
        const w = globalThis as unknown as { __bridge: string[]; __violations: string[] };
        return w.__bridge.length > 0 || w.__violations.length > 0;
      };
      const waits = [addin.waitForFunction(state, undefined, { timeout: 60_000 })];
      if (host.bridge === 'frame') waits.push(page.waitForFunction(state, undefined, { timeout: 60_000 }));
      for (const w of waits) w.catch(() => undefined);
      await Promise.race(waits);
      Object.assign(
        seen,
        await addin.evaluate(() => {
          const w = globalThis as unknown as {
            __violations: string[];
            __bridge: string[];
            __msAjaxStandIn?: boolean;
            Office?: { actions?: { _association?: { m_mappings: Record<string, unknown> } } };
          };
          // Office.actions keeps what the page associated (Microsoft's OfficeExt.Association).
          return {
            violations: w.__violations,
            bridge: w.__bridge,
            msAjax: w.__msAjaxStandIn === true,
            associated: Object.keys(w.Office?.actions?._association?.m_mappings ?? {}).sort(),
          };
        }),
      );
      if (host.bridge === 'frame') seen.bridge = await page.evaluate(() => (globalThis as unknown as { __bridge: string[] }).__bridge);
      return seen;
    } finally {
      await context.close();
    }
  }

  for (const host of HOSTS) {
    it(`${host.client}: office.js loads its host file and MicrosoftAjax.js under the page's CSP, and the handlers are associated`, async () => {
      const seen = await load(host);
      expect(seen.violations).toEqual([]);
      expect(seen.pageErrors).toEqual([]);
      expect(seen.consoleErrors).toEqual([]);
      expect(seen.refused).toEqual([]);
      expect(seen.msAjax).toBe(true);
      expect(seen.requested).toContain(`${CDN}office.js`);
      expect(seen.requested).toContain(`${CDN}${host.file}`);
      expect(seen.requested).toContain(MS_AJAX);
      expect(seen.bridge.length).toBeGreaterThan(0);
      expect(seen.associated).toEqual(LAUNCH_EVENTS.map((e) => e.functionName.toUpperCase()).sort());
    }, 120_000);
  }

  it('the policy lets nothing else run: another file of the same CDNs, another host, inline script', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      await context.route('**/*', async (route) => {
        const url = route.request().url();
        if (url.startsWith(`${BASE}/`)) return route.fulfill({ response: await route.fetch({ url: api.base + url.slice(BASE.length) }) });
        return route.fulfill({ contentType: 'text/javascript', body: 'window.__ran = (window.__ran || 0) + 1;' });
      });
      const page = await context.newPage();
      await page.goto(`${BASE}/addin/support.html`);
      const blocked = await page.evaluate<{ seen: string[]; ran: number }>(`(async () => {
        const seen = [];
        addEventListener('securitypolicyviolation', (e) => seen.push(e.blockedURI));
        const all = ${JSON.stringify(['https://ajax.aspnetcdn.com/ajax/jQuery/jquery-3.7.1.min.js', 'https://appsforoffice.microsoft.com/other/x.js', 'https://cdn.example/x.js'])}.map(
          (src) => new Promise((resolve) => {
            const s = document.createElement('script');
            s.src = src;
            s.onload = s.onerror = () => resolve();
            document.head.appendChild(s);
          }),
        );
        const inline = document.createElement('script');
        inline.textContent = 'window.__ran = (window.__ran || 0) + 1;';
        document.head.appendChild(inline);
        await Promise.all(all);
        return { seen: seen.sort(), ran: window.__ran || 0 };
      })()`);
      expect(blocked.ran).toBe(0);
      expect(blocked.seen).toEqual(
        [
          'https://ajax.aspnetcdn.com/ajax/jQuery/jquery-3.7.1.min.js',
          'https://appsforoffice.microsoft.com/other/x.js',
          'https://cdn.example/x.js',
          'inline',
        ].sort(),
      );
    } finally {
      await context.close();
    }
  }, 60_000);
});
