/**
 * The views the sandbox's compose-window demo makes (/sandbox/outlook) in a real headless Chromium,
 * with tracking on: each time the add-in sets the signature in the body, the browser fetches the
 * signature's view image, as Outlook's compose window would. Those views are the sender's own
 * browser showing what it writes, not a reader: each is classified proxy or scanner (the
 * compose-window signal, docs/analytics.md), never human, and the reports count no person's view.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { launchChromium } from '../../src/browser/chromium.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { OUTLOOK_DEMO_PATH, outlookDemoRoutes, type OutlookDemoSetup } from '../../src/sandbox/outlookDemo.ts';
import { tree, useApi } from '../api/helpers.ts';
import { seedAddinWorld, type AddinWorld } from './fixtures.ts';

const BASE = 'https://signatures.acme.test';
const DESKTOP_CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('the compose-window demo with tracking on', () => {
  let setup: OutlookDemoSetup | undefined;
  const api = useApi({ PUBLIC_BASE_URL: BASE, ADDIN_CACHE_SECONDS: '0', ADDIN_TIMEOUT_MS: '60000' }, { routes: [outlookDemoRoutes(() => setup)] });
  let w: AddinWorld;
  let browser: Browser;

  beforeAll(async () => {
    const { pool } = api.t.ctx;
    w = await seedAddinWorld(api.t.ctx, api.ws);
    await setEventTracking(pool, api.ws, true);
    await pool.query(`update signatures set content = $2 where id = $1`, [w.signatureId, JSON.stringify(tree('Regards from Acme'))]);
    setup = {
      key: (await createApiKey(pool, api.ws, 'sandbox Outlook add-in', 'addin')).key,
      user: 'ann@acme.test',
      shared: 'info@acme.test',
      internal: 'bob@acme.test',
      external: 'client@example.com',
    };
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await w?.emulator.close();
  });

  it('the views of the signature being written are proxy or scanner, never a person', async () => {
    // A person's desktop browser, as the sender's is: not the headless user agent, which alone would read as a scanner.
    const context = await browser.newContext({ ignoreHTTPSErrors: true, userAgent: DESKTOP_CHROME });
    // Nothing leaves the machine: the service's origin is the test server, everything else is refused.
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith(`${BASE}/`)) return route.fulfill({ response: await route.fetch({ url: api.base + url.slice(BASE.length) }) });
      return route.abort();
    });
    const page = await context.newPage();
    const images: string[] = [];
    page.on('request', (r) => {
      if (new URL(r.url()).pathname.startsWith('/v/')) images.push(r.url());
    });
    expect((await page.goto(`${BASE}${OUTLOOK_DEMO_PATH}`))!.status()).toBe(200);
    const handled = async () => Number((await page.locator('#outlook').getAttribute('data-events')) ?? 0);
    await expect.poll(handled).toBeGreaterThanOrEqual(1);
    await page.locator('#from').selectOption('info@acme.test');
    await expect.poll(handled).toBeGreaterThanOrEqual(2);
    await page.locator('#reply').click();
    await expect.poll(handled).toBeGreaterThanOrEqual(3);
    expect(images.length).toBeGreaterThan(0);

    // The views are written in batches: wait for every image fetched, with a generous deadline.
    const { pool } = api.t.ctx;
    const views = async () =>
      (await pool.query<{ traffic_class: string; class_reasons: string[] }>('select traffic_class, class_reasons from views where workspace_id = $1', [api.ws]))
        .rows;
    await expect.poll(async () => (await views()).length, { timeout: 60_000 }).toBeGreaterThanOrEqual(images.length);
    const rows = await views();
    expect(rows.filter((v) => v.traffic_class !== 'proxy' && v.traffic_class !== 'scanner')).toEqual([]);
    expect(rows.some((v) => v.class_reasons.includes('bot_user_agent'))).toBe(false);
    expect(rows.every((v) => v.class_reasons.includes('compose_window'))).toBe(true);

    await rebuildRollups(pool, { workspaceId: api.ws });
    const totals = (await api.call('GET', '/v1/analytics/overview')).body.data.totals;
    expect(totals).toMatchObject({ views: 0, all_views: rows.length, proxy_views: rows.length });
    await context.close();
  }, 120_000);
});
