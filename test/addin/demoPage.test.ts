/**
 * The sandbox's compose-window demo (/sandbox/outlook) in a real headless Chromium: the served
 * add-in handler runs under the stand-in Office runtime while the test types an internal and an
 * external recipient, switches From to the shared mailbox and replies, and the exact HTML of the
 * right variant reaches the body each time, under the page's strict policy. The routes exist only
 * where `serve` adds them in sandbox mode.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { launchChromium } from '../../src/browser/chromium.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { sandboxServerRoutes } from '../../src/sandbox/demo.ts';
import { OUTLOOK_DEMO_PATH, outlookDemoRoutes, type OutlookDemoSetup } from '../../src/sandbox/outlookDemo.ts';
import { tree, useApi } from '../api/helpers.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { insertSmartFieldValue } from '../helpers/fixtures/teammates.ts';
import { seedAddinWorld, type AddinWorld } from './fixtures.ts';

const BASE = 'https://signatures.acme.test';

interface Shown {
  events: number;
  kind: string;
  html: string | null;
}

describe('the sandbox compose-window demo in headless Chromium', () => {
  let setup: OutlookDemoSetup | undefined;
  // The handler waits for the service as long as a loaded machine may need (ADDIN_TIMEOUT_MS), not 3 s.
  const api = useApi({ PUBLIC_BASE_URL: BASE, ADDIN_CACHE_SECONDS: '0', ADDIN_TIMEOUT_MS: '60000' }, { routes: [outlookDemoRoutes(() => setup)] });
  let w: AddinWorld;
  let browser: Browser;
  let page: Page;
  const refused: string[] = [];
  const expected: Record<string, string> = {};

  beforeAll(async () => {
    const { pool } = api.t.ctx;
    w = await seedAddinWorld(api.t.ctx, api.ws);
    // Ann and the shared mailbox each have a title of their own, which their signatures show.
    const title = await insertSmartField(pool, api.ws, { label: 'Title', slug: 'title' });
    for (const [teammate, value] of [
      [w.ann.id, 'Engineer'],
      [w.shared.id, 'Customer support'],
    ] as const) {
      await insertSmartFieldValue(pool, api.ws, { teammateId: teammate, smartFieldId: title, value });
    }
    await pool.query(`update signatures set content = $2 where id = $1`, [w.signatureId, JSON.stringify(tree('Regards from Acme', title))]);
    await pool.query(`update signature_variants set content = $2 where signature_id = $1 and kind = 'reply'`, [
      w.signatureId,
      JSON.stringify(tree('Thanks, Acme', title)),
    ]);
    await pool.query(`update signature_variants set content = $2 where signature_id = $1 and kind = 'internal'`, [
      w.signatureId,
      JSON.stringify(tree('Cheers', title)),
    ]);
    for (const [who, person] of [
      ['ann', w.ann],
      ['shared', w.shared],
    ] as const) {
      for (const kind of ['primary', 'reply', 'internal'] as const) {
        const r = await renderForAddress(api.t.ctx, {
          workspaceId: api.ws,
          teammateId: person.id,
          signatureId: w.signatureId,
          kind,
          emailId: person.emailIds[0],
        });
        if (!r.available) throw new Error(`${who} ${kind}: ${r.unavailableReason}`);
        expected[`${who}.${kind}`] = `<div id="sigsync-signature">${r.html}</div>`; // marked as the add-in's own
      }
    }
    expect(new Set(Object.values(expected)).size).toBe(6);
    setup = {
      key: (await createApiKey(pool, api.ws, 'sandbox Outlook add-in', 'addin')).key,
      user: 'ann@acme.test',
      shared: 'info@acme.test',
      internal: 'bob@acme.test',
      external: 'client@example.com',
    };

    browser = await launchChromium();
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    // Nothing leaves the machine: the service's origin is the test server, everything else is refused.
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith(`${BASE}/`)) return route.fulfill({ response: await route.fetch({ url: api.base + url.slice(BASE.length) }) });
      return route.abort();
    });
    page = await context.newPage();
    page.on('pageerror', (e) => refused.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') refused.push(m.text());
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await w?.emulator.close();
  });

  /** What the page shows once `events` events have been handled: the variant it names and the body's HTML as the add-in set it. */
  const shown = async (events: number): Promise<Shown> => {
    const handled = async () => Number((await page.locator('#outlook').getAttribute('data-events')) ?? 0);
    await expect.poll(handled).toBeGreaterThanOrEqual(events);
    return {
      events: await handled(),
      kind: (await page.locator('#inserted-kind').getAttribute('data-kind')) ?? '',
      html: await page.evaluate(() => (globalThis as unknown as { __lastSignature(): string | null }).__lastSignature()),
    };
  };

  it('opens with the primary signature, then follows recipients, From and reply with the right variant', async () => {
    const res = await page.goto(`${BASE}${OUTLOOK_DEMO_PATH}`);
    expect(res!.status()).toBe(200);
    const csp = res!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    // No inline script: every script element has a source.
    expect(await page.locator('script:not([src])').count()).toBe(0);

    expect(await shown(1)).toEqual({ events: 1, kind: 'primary', html: expected['ann.primary'] });

    // An internal recipient typed in To: every recipient is inside, so the internal variant.
    await page.locator('#to').fill('bob@acme.test');
    await page.locator('#to').press('Enter');
    expect(await shown(2)).toEqual({ events: 2, kind: 'internal', html: expected['ann.internal'] });

    // An external one too: the primary signature again.
    await page.locator('#to').fill('client@example.com');
    await page.locator('#to').press('Enter');
    expect(await shown(3)).toEqual({ events: 3, kind: 'primary', html: expected['ann.primary'] });

    // From switched to the shared mailbox: its own signature, with its own values.
    await page.locator('#from').selectOption('info@acme.test');
    expect(await shown(4)).toEqual({ events: 4, kind: 'primary', html: expected['shared.primary'] });
    expect(await page.locator('#compose-body').innerText()).toContain('Customer support');

    // A reply: the reply variant of the address in From.
    await page.locator('#reply').click();
    expect(await shown(5)).toEqual({ events: 5, kind: 'reply', html: expected['shared.reply'] });
    expect(await page.locator('#events li').count()).toBe(5);
    expect(await page.locator('#events li').first().innerText()).toMatch(/^reply: reply variant of info@acme\.test in \d+ ms$/);
    expect(refused).toEqual([]);

    // The page's fetches went through the add-in route: both addresses it composed as are installed,
    // every variant, and the client is listed as the web one.
    const { pool } = api.t.ctx;
    const installs = await pool.query<{ row: string }>(
      `select e.address || ' ' || i.kind || ' ' || i.status as row from installations i join emails e on e.id = i.email_id
        where i.workspace_id = $1 and e.address in ('ann@acme.test', 'info@acme.test') order by 1`,
      [api.ws],
    );
    expect(installs.rows.map((r) => r.row)).toEqual(
      ['ann@acme.test', 'info@acme.test'].flatMap((a) => ['internal', 'primary', 'reply'].map((k) => `${a} ${k} installed`)),
    );
    const clients = await pool.query<{ row: string }>(
      `select e.address || ' ' || c.platform as row from addin_clients c join emails e on e.id = c.email_id where c.workspace_id = $1 order by 1`,
      [api.ws],
    );
    expect(clients.rows.map((r) => r.row)).toEqual(['ann@acme.test web', 'info@acme.test web']);
  }, 60_000);

  it('exists only where serve adds it in sandbox mode', async () => {
    const production = await buildServer(api.t.ctx);
    try {
      for (const url of [OUTLOOK_DEMO_PATH, `${OUTLOOK_DEMO_PATH}/office.js`, `${OUTLOOK_DEMO_PATH}/compose.js`])
        expect((await production.inject({ url })).statusCode, url).toBe(404);
    } finally {
      await production.close();
    }
    expect(sandboxServerRoutes({ SANDBOX: false, DATABASE_URL: undefined, DATA_DIR: '/nonexistent' })).toHaveLength(0);
    expect(sandboxServerRoutes({ SANDBOX: undefined, DATABASE_URL: 'postgres://db.example/sigsync', DATA_DIR: '/nonexistent' })).toHaveLength(0);
    expect(sandboxServerRoutes({ SANDBOX: undefined, DATABASE_URL: undefined, DATA_DIR: '/nonexistent' })).toHaveLength(1);
  });
});
