/**
 * The analytics loop over real HTTP, on real Postgres, graphile-worker and the emulated Gmail
 * tenant: publish -> installed HTML has tracked links and a tracked 1×1 image -> a mail client and
 * Gmail's image proxy fetch the image (two views, one proxied) -> a person and a bot follow links -> 302 with
 * click_id -> identify (browser script's endpoint) and a conversion (API) with that click_id ->
 * exactly one visitor.identified and one conversion.recorded delivered, signed, to a webhook
 * endpoint -> the reports count them, the bot apart, with views and CTR. The same conversion again changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import { switchEventTracking } from '../../src/analytics/tracking.ts';
import { countryOf } from '../../src/analytics/geo.ts';
import { createEndpoint } from '../../src/webhooks/endpoints.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';
import { assignToEveryGroup } from '../helpers/fixtures/signatures.ts';
import { DEADLINE_MS, waitFor } from '../helpers/cli.ts';
import { startServer } from '../helpers/server.ts';
import { startReceiver, verify, type Receiver } from '../webhooks/receiver.ts';

const DESTINATION = 'https://shop.acme.test/offer?ref=sig';
const CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const BOT = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';
const GMAIL_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
/** A public address the CC0 country database places in a country (checked below, not assumed). */
const CLIENT_IP = '81.2.69.142';

describe('analytics end to end', () => {
  const t = useTestContext({ TRUST_PROXY: '127.0.0.1' });
  let google: GoogleEmulator;
  let server: FastifyInstance;
  let runner: Runner;
  let receiver: Receiver;
  let base: string;
  let ws: string;
  let key: string;
  let secret: string;
  let signatureId: string;
  let trackingId: string;
  let clickId: string;
  let link: string;

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: r.status, body: (await r.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const jobsDone = () =>
    waitFor(
      async () => (await t.ctx.pool.query(`select count(*)::int as n from graphile_worker.jobs where run_at <= now() + interval '5 seconds'`)).rows[0].n === 0,
      DEADLINE_MS,
      50,
    );
  const hooks = (type: string) => receiver.received.map((r) => verify(secret, r) as { type: string }).filter((p) => p.type === type);

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(5));
    receiver = await startReceiver();
    ({ workspaceId: ws, key } = await workspaceWithKey(t.ctx));
    const directory = await connectGoogle(t.ctx, ws, google.url);
    await connectGoogle(t.ctx, ws, google.url, { category: 'signatures', name: 'Gmail' });
    const [run] = await startRuns(t.ctx.pool, ws, [directory.id], { trigger: 'cli' });
    await executeRun(t.ctx, run!.id, { retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 } });
    secret = (await createEndpoint(t.ctx, { workspaceId: ws, url: `${receiver.url}/hooks`, eventTypes: ['visitor.identified', 'conversion.recorded'] })).secret;
    await switchEventTracking(t.ctx.pool, ws, true);
    trackingId = (await t.ctx.pool.query('select event_tracking_id from workspaces where id = $1', [ws])).rows[0].event_tracking_id;
    ({ server, base } = await startServer(t.ctx));
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    await google?.close();
    await receiver?.close();
  });

  it('a publish installs tracked links; following one redirects to the destination with click_id', async () => {
    const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Our offer', href: { text: DESTINATION } }] }] };
    const created = await call('POST', '/v1/signatures', { signature: { name: 'Standard', draft_content: tree } });
    expect(created.status).toBe(201);
    signatureId = created.body.data.id;
    await assignToEveryGroup(t.ctx.pool, ws, signatureId);
    expect((await call('POST', `/v1/signatures/${signatureId}/publish`)).status).toBe(200);
    await jobsDone();
    const html = google.signatures()['user1@example.test']!;
    link = /<a href="([^"]*)"/.exec(html)![1]!;
    expect(link.startsWith(`${t.ctx.config.PUBLIC_BASE_URL}/c/`)).toBe(true);
    expect(html).not.toContain('shop.acme.test');

    // No banner: a tracked 1×1 image closes the signature. A mail client and Gmail's proxy fetch it.
    const pixel = /<img src="([^"]*)" width="1" height="1" alt=""[^>]*>$/.exec(html)![1]!;
    expect(pixel.startsWith(`${t.ctx.config.PUBLIC_BASE_URL}/v/`)).toBe(true);
    for (const ua of [CHROME, GMAIL_PROXY]) {
      const image = await fetch(`${base}${new URL(pixel).pathname}`, { headers: { 'user-agent': ua, 'x-forwarded-for': CLIENT_IP } });
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/gif');
    }
    await waitFor(async () => (await t.ctx.pool.query('select count(*)::int as n from views where workspace_id = $1', [ws])).rows[0].n === 2);

    const path = new URL(link).pathname;
    const person = await fetch(`${base}${path}`, { redirect: 'manual', headers: { 'user-agent': CHROME, 'x-forwarded-for': CLIENT_IP } });
    expect(person.status).toBe(302);
    const location = new URL(person.headers.get('location')!);
    clickId = location.searchParams.get('click_id')!;
    expect(`${location.origin}${location.pathname}?ref=${location.searchParams.get('ref')}`).toBe(DESTINATION);
    const bot = await fetch(`${base}${path}`, { redirect: 'manual', headers: { 'user-agent': BOT, 'x-forwarded-for': '198.51.100.7' } });
    expect(bot.status).toBe(302);
    await waitFor(async () => (await t.ctx.pool.query('select count(*)::int as n from clicks where workspace_id = $1', [ws])).rows[0].n === 2);
  });

  it('an identify from the browser and a conversion from the API fire one visitor.identified and one conversion.recorded; a repeat changes nothing', async () => {
    const script = await fetch(`${base}/t/${trackingId}/script.js`);
    expect(script.status).toBe(200);
    expect(await script.text()).toContain(`/t/${trackingId}/events`);
    const identify = await fetch(`${base}/t/${trackingId}/events`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.acme.test' },
      body: JSON.stringify({ event: { name: 'identify', user_id: 'customer-42', anonymous_id: 'anon-1', click_id: clickId, traits: { plan: 'pro' } } }),
    });
    expect(identify.status).toBe(200);
    expect(identify.headers.get('access-control-allow-origin')).toBe('*');

    const conversion = {
      event: { name: 'purchase', value: 49.5, currency: 'EUR', click_id: clickId, event_id: 'order-1001', user_id: 'customer-42', properties: { sku: 'A1' } },
    };
    const first = await call('POST', '/v1/analytics/events', conversion);
    expect(first).toEqual({
      status: 200,
      body: { data: { name: 'purchase', value: 49.5, currency: 'EUR', click_id: clickId, source: 'api', status: 'accepted', outcome: 'recorded' } },
    });
    await waitFor(async () => hooks('visitor.identified').length === 1 && hooks('conversion.recorded').length === 1);
    expect((await call('POST', '/v1/analytics/events', conversion)).status).toBe(200);
    await jobsDone();

    const [identified] = hooks('visitor.identified') as any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const emailId = (await t.ctx.pool.query(`select id from emails where address = 'user1@example.test'`)).rows[0].id;
    expect(identified).toMatchObject({
      visitor: { user_id: 'customer-42', anonymous_id: 'anon-1', identified_via: 'browser', traits: { plan: 'pro' } },
      attribution: { click_id: clickId, signature_template_uuid: signatureId, email_uuid: emailId },
    });
    const [converted] = hooks('conversion.recorded') as any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(converted).toMatchObject({
      event_id: 'order-1001',
      name: 'purchase',
      value: 49.5,
      currency: 'EUR',
      source: 'api',
      visitor: { anonymous_id: null, user_id: 'customer-42' },
      attribution: { signature_template_uuid: signatureId, email_uuid: emailId, marketing_campaign_uuid: '' },
      properties: { sku: 'A1' },
    });
    expect(converted.attribution.anchor_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(hooks('visitor.identified')).toHaveLength(1);
    expect(hooks('conversion.recorded')).toHaveLength(1);
    expect((await call('GET', '/v1/analytics/events')).body.pagination.total_count).toBe(2);
  });

  it('the reports count the clicks, the bot apart, the visitor and the conversion', async () => {
    await t.ctx.jobs.addJob('analytics_rollup', {});
    await jobsDone();
    const overview = await call('GET', '/v1/analytics/overview');
    expect(overview.body.data.totals).toMatchObject({
      clicks: 1,
      all_clicks: 2,
      human_clicks: 1,
      bot_clicks: 1,
      unique_clickers: 1,
      visitors: 1,
      events: 2,
      conversions: 1,
      conversion_value: [{ currency: 'EUR', value: 49.5, conversions: 1 }],
    });
    // Views are at the new workspace's default, aggregate: no per-viewer figure (docs/privacy.md).
    expect(overview.body.data.totals).toMatchObject({
      views: 1,
      all_views: 2,
      direct_views: 1,
      proxied_views: 1,
      bot_views: 0,
      unique_views: null,
      unique_direct_views: null,
      ctr: 1,
    });
    expect(overview.body.data.totals.installed_mailboxes).toBeGreaterThan(0);
    const signatures = await call('GET', '/v1/analytics/signatures');
    expect(signatures.body.data).toEqual([
      expect.objectContaining({
        signature_template_uuid: signatureId,
        name: 'Standard',
        clicks: 1,
        all_clicks: 2,
        bot_clicks: 1,
        conversions: 1,
        views: 1,
        ctr: 1,
      }),
    ]);
    expect(signatures.body.pagination).toMatchObject({ page: 1, total_count: 1, has_more: false });
    const teammates = await call('GET', '/v1/analytics/teammates?per_page=1');
    expect(teammates.body.data[0]).toMatchObject({ clicks: 1, human_clicks: 1, conversions: 1, views: 1, ctr: 1 });
    const countries = await call('GET', '/v1/analytics/countries');
    const country = countryOf(CLIENT_IP);
    expect(country).toMatch(/^[A-Z]{2}$/);
    expect(countries.body.data).toContainEqual(expect.objectContaining({ country_code: country, human_clicks: 1, conversions: 1 }));
    const anchors = await call('GET', '/v1/anchors');
    expect(anchors.body.data).toEqual([
      expect.objectContaining({ url: DESTINATION, source: 'signature', signature_template_uuid: signatureId, clicks: 1, all_clicks: 2, bot_clicks: 1 }),
    ]);
    const detail = await call(
      'GET',
      `/v1/anchors/${anchors.body.data[0].anchor_uuid}/analytics?granularity=hourly&date_from=${new Date().toISOString().slice(0, 10)}`,
    );
    expect(detail.body.data.totals).toMatchObject({ clicks: 1, all_clicks: 2, conversions: 1 });
    expect(detail.body.data.series).toHaveLength(24);
    expect(detail.body.data.series.reduce((n: number, p: { clicks: number }) => n + p.clicks, 0)).toBe(1);
    const visitors = await call('GET', '/v1/analytics/visitors');
    expect(visitors.body.data).toEqual([
      expect.objectContaining({ distinct_id: 'customer-42', first_touch: expect.objectContaining({ click_id: clickId, signature_template_id: signatureId }) }),
    ]);
    const profile = await call('GET', `/v1/analytics/visitors/${visitors.body.data[0].id}`);
    expect(profile.body.data.events.map((e: { name: string }) => e.name).sort()).toEqual(['identify', 'purchase']);
  });

  it('every report is also a CSV file, with the same filters', async () => {
    const csv = async (path: string) => {
      const r = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="[a-z0-9-]+\.csv"$/);
      const [header, ...lines] = (await r.text()).trimEnd().split('\n');
      return { header: header!.split(','), lines };
    };
    const signatures = await csv('/v1/analytics/signatures?format=csv&per_page=1&page=7');
    expect(signatures.header.slice(0, 3)).toEqual(['signature_template_uuid', 'name', 'installed_mailboxes']);
    expect(signatures.header).toContain('conversion_value');
    expect(signatures.lines).toHaveLength(1);
    const row = Object.fromEntries(signatures.header.map((h, i) => [h, signatures.lines[0]!.split(',')[i]]));
    expect(row).toMatchObject({
      signature_template_uuid: signatureId,
      name: 'Standard',
      clicks: '1',
      all_clicks: '2',
      bot_clicks: '1',
      conversions: '1',
      conversion_value: 'EUR 49.5 (1)',
      views: '1',
      ctr: '1',
    });
    for (const report of ['campaigns', 'countries', 'teammates']) expect((await csv(`/v1/analytics/${report}?format=csv`)).header).toContain('human_clicks');
    expect((await csv('/v1/analytics/teammates?format=csv')).lines).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10);
    const overview = await csv(`/v1/analytics/overview?format=csv&granularity=hourly&date_from=${today}`);
    expect(overview.header).toEqual([
      'period_start',
      'clicks',
      'human_clicks',
      'bot_clicks',
      'unique_clickers',
      'visitors',
      'conversions',
      'views',
      'proxied_views',
      'unique_views',
      'scanner_clicks',
      'proxy_clicks',
      'unknown_clicks',
      'scanner_views',
      'proxy_views',
      'unknown_views',
    ]);
    expect(overview.lines).toHaveLength(24);
    const anchors = await csv('/v1/anchors?format=csv');
    expect(anchors.header[0]).toBe('anchor_uuid');
    expect(anchors.lines).toHaveLength(1);
    const anchorId = anchors.lines[0]!.split(',')[0];
    expect((await csv(`/v1/anchors/${anchorId}/analytics?format=csv&date_from=${today}`)).lines).toHaveLength(1);
    const outside = await csv('/v1/analytics/signatures?format=csv&date_from=2020-01-01&date_to=2020-01-31');
    expect(outside.lines).toEqual([]);
  });
});
