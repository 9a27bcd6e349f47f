/**
 * The console's analytics page in headless Chromium, on the sandbox demo's clicks (one person's, one
 * crawler's) and conversion: figures equal the API's, the chart draws the clicks, the date range and
 * the CSV links work, and another workspace sees none of it.
 */
import { PNG } from 'pngjs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

interface Totals {
  [k: string]: number;
}
const METRICS = [
  'views',
  'proxy_views',
  'scanner_views',
  'unknown_views',
  'human_clicks',
  'scanner_clicks',
  'proxy_clicks',
  'unknown_clicks',
  'bot_clicks',
  'unique_clickers',
  'visitors',
  'conversions',
];

async function shownTotals(page: Page): Promise<Totals> {
  const out: Totals = {};
  for (const m of METRICS) out[m] = Number((await page.locator(`#totals [data-metric="${m}"] .value`).textContent())!.replace(/,/g, ''));
  return out;
}

/** The rows (top to bottom) where the canvas has pixels of the colour. */
async function rowsOfColour(page: Page, rgb: [number, number, number]): Promise<number[]> {
  const dataUrl = await page.locator('#chart canvas').evaluate((c) => (c as unknown as { toDataURL(): string }).toDataURL());
  const png = PNG.sync.read(Buffer.from(dataUrl.split(',')[1]!, 'base64'));
  const rows = new Set<number>();
  for (let y = 0; y < png.height; y++)
    for (let x = 0; x < png.width; x++) {
      const i = (y * png.width + x) * 4;
      if (
        Math.abs(png.data[i]! - rgb[0]) < 40 &&
        Math.abs(png.data[i + 1]! - rgb[1]) < 40 &&
        Math.abs(png.data[i + 2]! - rgb[2]) < 40 &&
        png.data[i + 3]! > 128
      )
        rows.add(y);
    }
  return [...rows].sort((a, b) => a - b);
}

describe('console: analytics', () => {
  const w = useConsoleWorld();

  it('a browser whose locale Intl refuses (en-US@posix, from LANG=C.UTF-8) still gets the page, its figures and its chart', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId, { locale: 'en-US@posix' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // The browser's own tag, as a page without the console's scripts sees it: one Intl refuses.
    const blank = await context.newPage();
    const refused = `(() => { try { new Intl.NumberFormat(navigator.language); return 'accepted'; } catch (e) { return String(e); } })()`;
    expect(await blank.evaluate<[string, string]>(`[navigator.language, ${refused}]`)).toEqual([
      'en-US@posix',
      'RangeError: Invalid language tag: en-US@posix',
    ]);
    await blank.close();
    await page.getByRole('link', { name: 'Analytics' }).click();
    // Ready, or the error the page shows when its module threw.
    await page.locator('body[data-ready="analytics"], #content .notice-error').first().waitFor();
    const api = (await w.acmeApi.request<{ data: { totals: Totals } }>('GET', '/v1/analytics/overview')).body.data;
    expect(await shownTotals(page)).toEqual(Object.fromEntries(METRICS.map((m) => [m, api.totals[m]])));
    expect(await page.locator('#chart canvas').count()).toBe(1);
    expect(await page.locator('#content .notice-error').count()).toBe(0);
    expect(errors).toEqual([]);
    // The page took the nearest tag Intl accepts.
    expect(await page.evaluate(() => navigator.language)).toBe('en-US');
    await context.close();
  });

  it("shows the API's figures for the demo's clicks and conversion, and draws the clicks", async () => {
    expect(w.clicked).toBeDefined();
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.locator('body[data-ready="analytics"]').waitFor();
    const api = (await w.acmeApi.request<{ data: { totals: Totals; series: Totals[] } }>('GET', '/v1/analytics/overview')).body.data;
    expect(api.totals.human_clicks).toBeGreaterThanOrEqual(1);
    expect(api.totals.bot_clicks).toBeGreaterThanOrEqual(1);
    expect(api.totals.conversions).toBe(1);
    expect(await shownTotals(page)).toEqual(Object.fromEntries(METRICS.map((m) => [m, api.totals[m]])));
    expect(await page.locator('#totals [data-metric="conversion_value"]').textContent()).toContain('490 USD');
    // People's figures by default, each other class beside them, and what the CTR divides by.
    expect(api.totals.views).toBe(api.totals.direct_views);
    expect(await page.locator('#totals [data-metric="ctr"]').textContent()).toContain('CTR (human clicks ÷ human-or-unknown views)');

    await w.screenshot(page, 'analytics');
    // The chart: the clicks it was given are the API's, and the human-clicks line (#0b57d0) rises off its baseline.
    expect(Number(await page.locator('#chart').getAttribute('data-clicks'))).toBe(api.totals.human_clicks! + api.totals.bot_clicks!);
    const rows = await rowsOfColour(page, [0x0b, 0x57, 0xd0]);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.at(-1)! - rows[0]!, 'the line is not flat').toBeGreaterThan(20);

    // Breakdowns name the teammate whose signature was clicked; the CSV link answers the same rows.
    const teammates = (await w.acmeApi.request<{ data: { display_name: string; human_clicks: number }[] }>('GET', '/v1/analytics/teammates')).body.data;
    const top = teammates[0]!;
    const section = page.getByRole('region', { name: 'Per teammate' });
    await expect(section.locator('tbody tr').first().textContent()).resolves.toContain(top.display_name);
    const csv = await context.request.get(`${w.base}${await section.getByRole('link').getAttribute('href')}`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toContain('text/csv');
    expect(await csv.text()).toContain(top.display_name);

    // A date range without clicks, chosen from the keyboard: zeros, as the API says.
    await page.getByLabel('From (UTC)').fill('2020-01-01');
    await page.getByLabel('To (UTC)').fill('2020-01-31');
    await page.getByLabel('To (UTC)').press('Enter');
    await page.waitForURL(/date_from=2020-01-01/);
    await page.locator('body[data-ready="analytics"]').waitFor();
    const old = (await w.acmeApi.request<{ data: { totals: Totals } }>('GET', '/v1/analytics/overview?date_from=2020-01-01&date_to=2020-01-31')).body.data;
    expect(await shownTotals(page)).toEqual(Object.fromEntries(METRICS.map((m) => [m, old.totals[m]])));
    expect(old.totals.human_clicks).toBe(0);
    await context.close();
  });

  it('another workspace sees its own (empty) analytics, not the demo clicks', async () => {
    const { context, page } = await w.signIn(w.globex.workspaceId);
    await page.goto(`${w.base}/console/analytics`);
    await page.locator('body[data-ready="analytics"]').waitFor();
    expect(await shownTotals(page)).toEqual(Object.fromEntries(METRICS.map((m) => [m, 0])));
    expect(await page.locator('main').textContent()).not.toContain('Acme standard');
    await context.close();
  });

  it('the page has no serious accessibility violation', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.goto(`${w.base}/console/analytics`);
    await page.locator('body[data-ready="analytics"]').waitFor();
    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await context.close();
  });
});
