/**
 * Who made a click or a view (src/analytics/classify.ts): the labelled request set is recognised
 * with precision and recall ≥ 0.95 for "not a person"; over real HTTP each click and view is stored
 * with its class, reasons and network (ASN and owner from the offline data set), never the address;
 * the compose window's fetch of the signature's image is a proxy's, for the page it comes from; the
 * reports show people's figures, each other class beside them, and CTR over human-or-unknown views.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { labelledRequests, score } from '../../bench/classify.ts';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { OUTLOOK_DEMO_PATH } from '../../src/sandbox/outlookDemo.ts';
import { useApi } from '../api/helpers.ts';
import { waitFor } from '../helpers/cli.ts';
import { trackedImage, trackedLinks } from '../helpers/tracking.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36';
const OUTLOOK = 'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17726; Pro)';

describe('the labelled request set', () => {
  it('tells machines from people with precision and recall of at least 0.95, and each class apart', () => {
    const s = score(labelledRequests());
    expect(s.requests).toBeGreaterThanOrEqual(70);
    expect(s.not_a_person.precision).toBeGreaterThanOrEqual(0.95);
    expect(s.not_a_person.recall).toBeGreaterThanOrEqual(0.95);
    for (const c of ['human', 'scanner', 'proxy'] as const) {
      expect(s.classes[c]!.precision, c).toBeGreaterThanOrEqual(0.95);
      expect(s.classes[c]!.recall, c).toBeGreaterThanOrEqual(0.95);
    }
  });
});

describe('classification as clicks and views are recorded', () => {
  // The service sits behind a proxy here, so that each request can come from a real network's address.
  const api = useApi({ TRUST_PROXY: '127.0.0.1' });
  const signatureId = crypto.randomUUID();
  const teammateId = crypto.randomUUID();
  let links: string[];
  let pixel: string;
  let composeLinks: string[];
  let composePixel: string;

  const row = (table: 'clicks' | 'views', where: string, value: string) =>
    waitFor(
      async () => (await api.t.ctx.pool.query(`select * from ${table} where ${where} = $1 order by 1`, [value])).rows[0] as Record<string, unknown> | undefined,
    );
  /** A GET with exactly these headers (fetch drops Referer and Sec-Fetch-*, which a browser sends); answers the Location. */
  const get = (url: string, headers: Record<string, string>) =>
    new Promise<string | undefined>((resolve, reject) => {
      http
        .get(url, { headers }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers.location));
        })
        .on('error', reject);
    });
  const follow = async (url: string, ip: string, ua: string, referer?: string) => {
    const location = await get(url, { 'user-agent': ua, 'x-forwarded-for': ip, ...(referer ? { referer } : {}) });
    return new URL(location!).searchParams.get('click_id')!;
  };

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    const target = { workspaceId: api.ws, signatureId, campaignId: null, teammateId, emailId: crypto.randomUUID() };
    links = await trackedLinks(api.t.ctx, api.base, target, ['https://acme.test/pricing', 'https://acme.test/about', 'https://acme.test/jobs']);
    pixel = await trackedImage(api.t.ctx, api.base, target);
    const compose = { ...target, emailId: crypto.randomUUID() };
    composeLinks = await trackedLinks(api.t.ctx, api.base, compose, ['https://acme.test/summit']);
    composePixel = await trackedImage(api.t.ctx, api.base, compose);
  });

  it('a Safe Links check from Microsoft’s network is a scanner’s click, with the network kept and not the address', async () => {
    const id = await follow(links[0]!, '40.94.100.5', CHROME);
    const r = await row('clicks', 'id', id);
    expect(r).toMatchObject({ traffic_class: 'scanner', network_asn: 8075, network_org: 'Microsoft Corporation', is_bot: true });
    expect(r!.class_reasons).toContain('network:microsoft');
    expect(JSON.stringify(r)).not.toContain('40.94.100.5');
  });

  it('a person on a home network is human; a client in a cloud provider’s network is unknown, not a bot', async () => {
    const person = await row('clicks', 'id', await follow(links[1]!, '73.162.4.22', CHROME));
    expect(person).toMatchObject({ traffic_class: 'human', network_asn: 7922, is_bot: false, class_reasons: [] });
    const cloud = await row('clicks', 'id', await follow(links[2]!, '159.203.10.4', CHROME));
    expect(cloud).toMatchObject({ traffic_class: 'unknown', network_asn: 14061, is_bot: false, class_reasons: ['network:cloud'] });
  });

  it('a gateway’s referrer is kept as a reason; with its network the click is a scanner’s, from a home network a person’s', async () => {
    const id = await follow(links[1]!, '64.235.150.250', CHROME, 'https://linkprotect.cudasvc.com/url?a=https%3a%2f%2facme.test');
    const r = await row('clicks', 'id', id);
    expect(r).toMatchObject({ traffic_class: 'scanner', network_asn: 15324 });
    expect(r!.class_reasons).toEqual(['gateway_referrer:linkprotect.cudasvc.com', 'network:barracuda']);
    const person = await row('clicks', 'id', await follow(links[2]!, '73.162.77.2', CHROME, 'https://urldefense.com/v3/__https://acme.test__'));
    expect(person).toMatchObject({ traffic_class: 'human', network_asn: 7922, class_reasons: ['gateway_referrer:urldefense.com'] });
  });

  it('Apple Mail Privacy Protection’s preload is a proxy’s view; a person’s mail client is human', async () => {
    await fetch(pixel, { headers: { 'user-agent': 'Mozilla/5.0', 'x-forwarded-for': '17.58.63.10' } });
    await fetch(pixel, { headers: { 'user-agent': OUTLOOK, 'x-forwarded-for': '81.2.69.160' } });
    const rows = await waitFor(async () => {
      const { rows } = await api.t.ctx.pool.query(
        `select traffic_class, class_reasons, network_asn from views where network_asn in (714, 20712) order by network_asn`,
      );
      return rows.length === 2 ? rows : undefined;
    });
    expect(rows).toEqual([
      { traffic_class: 'proxy', class_reasons: ['proxy_user_agent:apple_mail_privacy', 'network:apple'], network_asn: 714 },
      { traffic_class: 'human', class_reasons: [], network_asn: 20712 },
    ]);
  });

  it('the compose window’s fetch of the signature’s image is a proxy’s (the sender writing, not a person reading), whatever its browser', async () => {
    // What the sandbox's compose-window page makes its browser send for the image in the body.
    const page = `${api.t.ctx.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}${OUTLOOK_DEMO_PATH}`;
    for (const ua of [CHROME, HEADLESS])
      await get(composePixel, { 'user-agent': ua, referer: page, 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'image', 'x-forwarded-for': '73.162.9.1' });
    await get(composePixel, { 'user-agent': CHROME, referer: 'https://outlook.office.com/', 'x-forwarded-for': '86.160.2.3' });
    const rows = await waitFor(async () => {
      const { rows } = await api.t.ctx.pool.query(
        `select traffic_class from views where network_asn in (7922, 2856) and 'compose_window' = any(class_reasons)`,
      );
      return rows.length === 3 ? rows : undefined;
    });
    for (const r of rows) expect(r.traffic_class).toBe('proxy');
  });

  it('a click within seconds of the same address’s machine view of the signature’s image is a scanner’s (the time pattern); a person’s quick click is a person’s', async () => {
    // A sandbox in a cloud opens the message headless, then follows the link with an ordinary browser's user agent.
    await get(composePixel, { 'user-agent': HEADLESS, 'x-forwarded-for': '3.85.12.44' });
    const id = await follow(composeLinks[0]!, '3.85.12.44', CHROME);
    const r = await row('clicks', 'id', id);
    expect(r).toMatchObject({ traffic_class: 'scanner', is_bot: true });
    expect(r!.class_reasons).toEqual(['network:cloud', 'soon_after_view']);
    // A person's mail client shows the image, and the person clicks at once: still a person.
    await get(composePixel, { 'user-agent': OUTLOOK, 'x-forwarded-for': '98.207.10.5' });
    const quick = await row('clicks', 'id', await follow(composeLinks[0]!, '98.207.10.5', CHROME));
    expect(quick).toMatchObject({ traffic_class: 'human', class_reasons: [] });
  });

  it('the reports count people by default, each other class beside them, and CTR over human-or-unknown views', async () => {
    await waitFor(async () =>
      (await api.t.ctx.pool.query(`select count(*)::int as n from clicks where workspace_id = $1`, [api.ws])).rows[0].n >= 5 ? true : undefined,
    );
    await rebuildRollups(api.t.ctx.pool, { workspaceId: api.ws });
    const res = await api.call('GET', '/v1/analytics/overview');
    expect(res.status).toBe(200);
    const t = (res.body as { data: { totals: Record<string, number | null> } }).data.totals;
    const { rows } = await api.t.ctx.pool.query(
      `select traffic_class, count(*)::int as n, 'c' as kind from clicks where workspace_id = $1 group by 1 union all select traffic_class, count(*)::int, 'v' from views where workspace_id = $1 group by 1`,
      [api.ws],
    );
    const n = (kind: string, cls: string) => rows.find((x) => x.kind === kind && x.traffic_class === cls)?.n ?? 0;
    expect(t).toMatchObject({
      clicks: n('c', 'human'),
      human_clicks: n('c', 'human'),
      scanner_clicks: n('c', 'scanner'),
      unknown_clicks: n('c', 'unknown'),
      bot_clicks: n('c', 'scanner') + n('c', 'proxy'),
      all_clicks: rows.filter((x) => x.kind === 'c').reduce((s, x) => s + x.n, 0),
      views: n('v', 'human'),
      proxy_views: n('v', 'proxy'),
      proxied_views: n('v', 'proxy'),
      unknown_views: n('v', 'unknown'),
    });
    expect(t.clicks).toBeGreaterThan(0);
    expect(t.scanner_clicks).toBeGreaterThan(0);
    expect(t.ctr).toBe(Math.round((n('c', 'human') / (n('v', 'human') + n('v', 'unknown'))) * 10_000) / 10_000);
  });
});
