/**
 * The served manifest, read back with Microsoft's office-addin-manifest (its local reader; its
 * validate command needs a Microsoft web service), and every URL in it requested from the server.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OfficeAddinManifest } from 'office-addin-manifest';
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { buildManifest, LAUNCH_EVENTS } from '../../src/addin/manifest.ts';
import { resolvePublicBaseUrl } from '../../src/db/deployment.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { useApi } from '../api/helpers.ts';

const BASE = 'https://signatures.acme.test';
const CLIENT_ID = '6f1c3c9e-8a51-4c2b-9d3e-2f0b6a7c1d45';

async function readBack(xml: string) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'manifest-')), 'manifest.xml');
  fs.writeFileSync(file, xml);
  return OfficeAddinManifest.readManifestFile(file);
}

describe('the add-in manifest', () => {
  const api = useApi({ PUBLIC_BASE_URL: BASE, ADDIN_ENTRA_CLIENT_ID: CLIENT_ID });
  /** Requests a manifest URL from the test server: same path and query, this server. */
  const served = (url: string) => fetch(`${api.base}${url.slice(BASE.length)}`);

  for (const mode of ['single sign-on', 'key-only'] as const) {
    it(`(${mode}) reads back with its id, version, host, permissions, and every URL https and answering 200`, async () => {
      const key = mode === 'key-only' ? (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key : undefined;
      const res = await fetch(`${api.base}/addin/manifest.xml${key ? `?key=${key}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
      const xml = await res.text();
      const info = await readBack(xml);
      expect(info.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(info.version).toMatch(/^0\.1\.0\.\d{1,5}$/);
      expect(info.hosts).toEqual(['Mailbox']);
      expect(info.permissions).toBe('ReadWriteItem');
      expect(info.officeAppType).toBe('MailApp');
      expect(info.iconUrl).toBe(`${BASE}/addin/icon-64.png`);
      expect(info.supportUrl).toBe(`${BASE}/addin/support.html`);
      expect(xml).toContain(`<bt:Url id="WebViewRuntime.Url" DefaultValue="${BASE}/addin/commands.html${key ? `?key=${key}` : ''}"/>`);

      const urls = [...xml.matchAll(/(?:DefaultValue="|<AppDomain>)(https?:\/\/[^"<]+)/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
      expect(urls.length).toBeGreaterThanOrEqual(10);
      for (const url of urls) {
        expect(url.startsWith(`${BASE}/`) || url === BASE, url).toBe(true);
        if (url === BASE) continue;
        const r = await served(url);
        expect(r.status, url).toBe(200);
      }
      // Each LaunchEvent's handler is registered by the served runtime.
      const js = await (await served(`${BASE}/addin/launchevent.js${key ? `?key=${key}` : ''}`)).text();
      const events = [...xml.matchAll(/<LaunchEvent Type="(\w+)" FunctionName="(\w+)"\/>/g)].map((m) => [m[1], m[2]]);
      expect(new Set(events.map((e) => e[0]))).toEqual(new Set(['OnNewMessageCompose', 'OnMessageRecipientsChanged', 'OnMessageFromChanged']));
      for (const [, fn] of events) expect(js).toContain(`Office.actions.associate('${fn}', ${fn})`);
      expect(LAUNCH_EVENTS).toHaveLength(3);
      expect(xml).toContain('<Override type="javascript" resid="JSRuntime.Url"/>');
      expect(xml).toContain(`<Id>${CLIENT_ID}</Id>`);
      expect(xml).toContain(`<Resource>api://signatures.acme.test/${CLIENT_ID}</Resource>`);
      expect(js).toContain(key ? `"key":"${key}"` : '"key":null');
      expect(js).toContain(`"base":"${BASE}"`);
    });
  }

  it('activates on desktop, in shared folders and shared mailboxes, and on iOS and Android', async () => {
    const xml = await (await fetch(`${api.base}/addin/manifest.xml`)).text();
    await readBack(xml);
    // Mobile reports Mailbox up to 1.5; Microsoft's mobile event-based manifest asks 1.5 (src/addin/manifest.ts, OVERRIDES_MIN_MAILBOX).
    expect(xml).toMatch(/xsi:type="VersionOverridesV1_1">\s*<Requirements>\s*<bt:Sets DefaultMinVersion="1\.5">\s*<bt:Set Name="Mailbox"\/>/);
    const desktop = xml.slice(xml.indexOf('<DesktopFormFactor>'), xml.indexOf('</DesktopFormFactor>'));
    const mobile = xml.slice(xml.indexOf('<MobileFormFactor>'), xml.indexOf('</MobileFormFactor>'));
    // SupportsSharedFolders: the first child of DesktopFormFactor, never of MobileFormFactor.
    expect(desktop).toMatch(/^<DesktopFormFactor>\s*<SupportsSharedFolders>true<\/SupportsSharedFolders>\s*<FunctionFile/);
    expect(mobile).not.toContain('SupportsSharedFolders');
    for (const part of [desktop, mobile]) {
      for (const e of LAUNCH_EVENTS) expect(part).toContain(`<LaunchEvent Type="${e.type}" FunctionName="${e.functionName}"/>`);
    }
  });

  it('versions the manifest with its content: the same content keeps its version, another content gets another', async () => {
    const version = (xml: string) => /<Version>([^<]+)<\/Version>/.exec(xml)![1]!;
    const sso = await (await fetch(`${api.base}/addin/manifest.xml`)).text();
    expect(version(await (await fetch(`${api.base}/addin/manifest.xml`)).text())).toBe(version(sso));
    const key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
    const keyOnly = await (await fetch(`${api.base}/addin/manifest.xml?key=${key}`)).text();
    expect(version(keyOnly)).not.toBe(version(sso));
    const settings = { PUBLIC_BASE_URL: BASE, ADDIN_ID: undefined, ADDIN_ENTRA_CLIENT_ID: CLIENT_ID, ADDIN_ENTRA_AUDIENCE: undefined };
    expect(buildManifest(settings).xml).toBe(sso);
    const other = buildManifest({ ...settings, ADDIN_ENTRA_CLIENT_ID: '0b7e4a2c-1d3f-4e5a-8b6c-7d8e9f0a1b2c' }).xml;
    expect(version(other)).not.toBe(version(sso));
    expect(version(other)).toMatch(/^0\.1\.0\.\d{1,5}$/);
  });

  it('ignores a key that is not shaped like one, so nothing can be written into the script', async () => {
    const js = await (await fetch(`${api.base}/addin/launchevent.js?key=${encodeURIComponent('x";alert(1);//')}`)).text();
    expect(js.split('\n')[0]).toContain('"key":null');
  });

  it("serves the well-known file that lets classic Outlook for Windows run the manifest's handler (CORS, single sign-on)", async () => {
    const r = await fetch(`${api.base}/.well-known/microsoft-officeaddins-allowed.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await r.json()) as { allowed: string[] };
    expect(body).toEqual({ allowed: [`${BASE}/addin/launchevent.js`] });
    // The very URL the manifest gives the JavaScript-only runtime.
    const xml = await (await fetch(`${api.base}/addin/manifest.xml`)).text();
    expect(xml).toContain(`<bt:Url id="JSRuntime.Url" DefaultValue="${body.allowed[0]}"/>`);
  });

  it('the runtime page is served under a strict Content-Security-Policy', async () => {
    const r = await fetch(`${api.base}/addin/commands.html`);
    // What office.js loads and nothing else (test/addin/officeJs.test.ts runs it under this header).
    expect(r.headers.get('content-security-policy')).toContain(
      "script-src 'self' https://appsforoffice.microsoft.com/lib/1/hosted/ https://ajax.aspnetcdn.com/ajax/3.5/MicrosoftAjax.js;",
    );
    expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await r.text()).toContain('<script src="launchevent.js"></script>');
  });

  it('sigsync addin manifest refuses without an Entra app or a key, and warns about an http base URL', async () => {
    const none = await runCli(['addin', 'manifest'], { PUBLIC_BASE_URL: BASE });
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(/no manifest printed: the add-in would have no way to sign in.*ADDIN_ENTRA_CLIENT_ID.*--key/s);
    const db = { DATABASE_URL: api.t.url, ENCRYPTION_KEY: TEST_KEY };
    const http = await runCli(['addin', 'manifest'], { ...db, PUBLIC_BASE_URL: 'http://localhost:3000', ADDIN_ENTRA_CLIENT_ID: CLIENT_ID });
    expect(http.code).toBe(0);
    expect(http.stderr).toMatch(/Outlook loads add-ins only over https/);
  });

  it("sigsync addin manifest, PUBLIC_BASE_URL unset, prints the server's manifest from the deployment's recorded base URL", async () => {
    // The API server records its PUBLIC_BASE_URL as it starts (src/db/deployment.ts).
    await resolvePublicBaseUrl(api.t.ctx.pool, { role: 'server', configured: BASE, explicit: true, logger: api.t.ctx.logger });
    const db = { DATABASE_URL: api.t.url, ENCRYPTION_KEY: TEST_KEY };
    const printed = await runCli(['addin', 'manifest'], { ...db, ADDIN_ENTRA_CLIENT_ID: CLIENT_ID });
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    const servedXml = await (await fetch(`${api.base}/addin/manifest.xml`)).text();
    expect(printed.stdout.trim()).toBe(servedXml.trim());
    // Key-only: the key must be one this deployment knows.
    const key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
    const keyOnly = await runCli(['addin', 'manifest', '--key', key], db);
    expect(keyOnly.code).toBe(0);
    expect(keyOnly.stdout).toContain(`<bt:Url id="JSRuntime.Url" DefaultValue="${BASE}/addin/launchevent.js?key=${key}"/>`);
    const unknown = await runCli(['addin', 'manifest', '--key', 'sgs_addin_not_a_real_key_0000'], db);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no such add-in key/);
    expect(unknown.stdout).toBe('');
  });
});

describe('the add-in manifest of a deployment with no Entra app', () => {
  const api = useApi({ PUBLIC_BASE_URL: BASE });

  it('is not served without a key (404 addin_not_configured, in plain words), and is with one', async () => {
    const r = await fetch(`${api.base}/addin/manifest.xml`);
    expect(r.status).toBe(404);
    const body = (await r.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'not_found_error', code: 'addin_not_configured' });
    expect(body.error.message).toMatch(/no way to sign in.*ADDIN_ENTRA_CLIENT_ID.*\?key=/s);
    const key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
    const withKey = await fetch(`${api.base}/addin/manifest.xml?key=${key}`);
    expect(withKey.status).toBe(200);
    expect(await withKey.text()).not.toContain('<WebApplicationInfo>');
  });
});
