/**
 * Views over real HTTP: the tracked image of an installed signature (`/v/{token}`) answers with the
 * 1×1 GIF, the stored asset bytes or a redirect to the banner image's own address; each fetch is
 * recorded once, in batches, with its attribution, proxy and bot flags and no client address;
 * forged tokens get a plain 404; switched-off tracking answers unrecorded; the per-address limit.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { PIXEL_GIF } from '../../src/api/views.ts';
import { assetPublicUrl, upsertAsset } from '../../src/assets/assets.ts';
import { renderTracked } from '../../src/analytics/renderTracking.ts';
import { renderSignature, type RenderInput } from '../../src/render/render.ts';
import type { ContentTree } from '../../src/render/schema.ts';
import { pruneViews, ViewRecorder, type View } from '../../src/analytics/views.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { createLogger } from '../../src/log.ts';
import { useApi } from '../api/helpers.ts';
import { waitFor } from '../helpers/cli.ts';
import { failingOncePool } from '../helpers/db.ts';
import { trackedImage } from '../helpers/tracking.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const GMAIL = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const SIGNATURE = {
  type: 'stack',
  id: 'root',
  children: [{ type: 'text', id: 'name', tokens: [{ type: 'textToken', id: 'n', value: 'Ann Lee' }] }],
} as ContentTree;
const text = (id: string, value: string) => ({ type: 'text', id, tokens: [{ type: 'textToken', id: `${id}-t`, value }] });
const image = (id: string, assetUuid: string, href?: string) => ({
  type: 'text',
  id,
  tokens: [{ type: 'textToken', id: `${id}-t`, value: 'img', assetUuid, ...(href ? { href: { text: href } } : {}) }],
});

describe('tracked images', () => {
  const api = useApi();
  const signatureId = crypto.randomUUID();
  const campaignId = crypto.randomUUID();
  const teammateId = crypto.randomUUID();
  const emailId = crypto.randomUUID();
  let pixel: string;
  let assetImage: string;
  let externalImage: string;

  const target = (ws: string, campaign: string | null) => ({ workspaceId: ws, signatureId, campaignId: campaign, teammateId, emailId });
  const srcs = (html: string) => [...html.matchAll(/<img src="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
  /** What an install writes for the signature `tree` with the campaign's `banner`, for `t`. */
  const installed = async (t: ReturnType<typeof target>, tree: ContentTree, banner?: unknown, assets?: Map<string, { url: string }>) => {
    const campaign = banner
      ? { id: t.campaignId!, status: 'active', content: banner as ContentTree, signature_template_ids: [t.signatureId], smart_fields_conditions: [] }
      : null;
    const input: RenderInput = { tree, values: {}, assets, campaign, signatureId: t.signatureId };
    const ctx = { ...api.t.ctx, config: { ...api.t.ctx.config, PUBLIC_BASE_URL: api.base } };
    return { plain: renderSignature(input).html, html: (await renderTracked(ctx, t, (tracking) => renderSignature(input, tracking))).html };
  };
  const fetchImage = (url: string, ua: string | null = CHROME, method = 'GET') =>
    fetch(url, { redirect: 'manual', method, headers: ua === null ? {} : { 'user-agent': ua } });
  const viewsOf = async (url: string) => {
    const id = viewTokens(api.t.ctx.secrets).verify(url.split('/v/')[1]!);
    return (await api.t.ctx.pool.query('select * from views where image_id = $1 order by viewed_at', [id])).rows;
  };

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    pixel = srcs((await installed(target(api.ws, null), SIGNATURE)).html).at(-1)!;
    const asset = await upsertAsset(api.t.ctx.pool, api.ws, { name: 'Summit', role: 'banner', contentType: 'image/png', data: PNG, filename: 'summit' });
    const [held, second, external] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const assets = new Map([
      [held, { url: assetPublicUrl(api.t.ctx.config.PUBLIC_BASE_URL, asset.public_token) }],
      [second, { url: 'https://cdn.acme.test/second.png' }],
      [external, { url: 'https://cdn.acme.test/summit.png?w=600&v=2' }],
    ]);
    const withAsset = (
      await installed(target(api.ws, campaignId), SIGNATURE, { type: 'stack', id: 'b', children: [image('held', held), image('second', second)] }, assets)
    ).html;
    assetImage = srcs(withAsset)[0]!;
    expect(srcs(withAsset)[1]).toBe('https://cdn.acme.test/second.png');
    const externalBanner = { type: 'stack', id: 'b', children: [image('ext', external, 'https://acme.test/summit')] };
    externalImage = srcs((await installed({ ...target(api.ws, campaignId), emailId: crypto.randomUUID() }, SIGNATURE, externalBanner, assets)).html)[0]!;
  });

  it('a signature without a banner image gets one 1×1 image appended; the same input gives the same HTML', async () => {
    const { plain, html } = await installed(target(api.ws, null), SIGNATURE);
    expect(html.startsWith(plain)).toBe(true);
    expect(html.slice(plain.length)).toBe(`<img src="${pixel}" width="1" height="1" alt="" style="display:block;border:0">`);
    expect(pixel).toMatch(new RegExp(`^${api.base}/v/[A-Za-z0-9_-]{24}$`));
    expect((await installed(target(api.ws, null), SIGNATURE)).html).toBe(html);
    // Only the banner's first image is tracked; a banner without an http(s) image gets the 1×1 image.
    const textBanner = (await installed(target(api.ws, campaignId), SIGNATURE, { type: 'stack', id: 'b', children: [text('join', 'Join us')] })).html;
    expect(textBanner).toContain('Join us');
    expect(srcs(textBanner)).toHaveLength(1);
    expect(textBanner).toContain('width="1" height="1"');
  });

  it('in a rendered signature, the banner image is tracked, the logo before it and later banner images are not', async () => {
    const logoId = crypto.randomUUID();
    const bannerId = crypto.randomUUID();
    const tree = { type: 'stack', id: 'root', children: [image('logo', logoId), text('name', 'Ann Lee')] } as ContentTree;
    const banner = { type: 'stack', id: 'b', children: [image('banner', bannerId), image('second', logoId)] };
    const assets = new Map([
      [logoId, { url: 'https://sig.acme.test/assets/logo' }],
      [bannerId, { url: 'https://sig.acme.test/assets/banner' }],
    ]);
    const { plain, html } = await installed({ ...target(api.ws, campaignId), emailId: crypto.randomUUID() }, tree, banner, assets);
    const [logo, tracked, second] = srcs(html);
    expect([logo, second]).toEqual(['https://sig.acme.test/assets/logo', 'https://sig.acme.test/assets/logo']);
    expect(tracked).toMatch(new RegExp(`^${api.base}/v/[A-Za-z0-9_-]{24}$`));
    expect(html).not.toContain('width="1" height="1"');
    expect(html.length - plain.length).toBe(tracked!.length - 'https://sig.acme.test/assets/banner'.length);
  });

  it('the 1×1 image answers a transparent GIF, never cached, and the view is recorded with its attribution', async () => {
    const res = await fetchImage(pixel);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/gif');
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(PIXEL_GIF);
    const [row] = await waitFor(async () => ((await viewsOf(pixel)).length ? viewsOf(pixel) : undefined));
    expect(row).toMatchObject({
      workspace_id: api.ws,
      signature_id: signatureId,
      campaign_id: null,
      teammate_id: teammateId,
      email_id: emailId,
      is_proxied: false,
      proxy: null,
      is_bot: false,
      country_code: '',
    });
    expect(row.viewer).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(JSON.stringify(row)).not.toContain('127.0.0.1');
  });

  it('a banner image held as an asset answers its stored bytes; any other banner image redirects to its own address', async () => {
    const held = await fetchImage(assetImage);
    expect(held.status).toBe(200);
    expect(held.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await held.arrayBuffer())).toEqual(PNG);
    const other = await fetchImage(externalImage);
    expect(other.status).toBe(302);
    expect(other.headers.get('location')).toBe('https://cdn.acme.test/summit.png?w=600&v=2');
    const [v] = await waitFor(async () => ((await viewsOf(assetImage)).length ? viewsOf(assetImage) : undefined));
    expect(v).toMatchObject({ campaign_id: campaignId, signature_id: signatureId });
    expect(await waitFor(async () => ((await viewsOf(externalImage)).length === 1 ? true : undefined))).toBe(true);
  });

  it('each fetch is one view; image proxies and privacy preloading are flagged as proxied, bots as bots', async () => {
    const before = (await viewsOf(pixel)).length;
    for (const ua of [
      GMAIL,
      'Mozilla/5.0',
      'YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html',
      'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
      CHROME,
    ]) {
      expect((await fetchImage(pixel, ua)).status).toBe(200);
    }
    expect((await fetchImage(pixel, CHROME, 'HEAD')).status).toBe(200);
    const rows = await waitFor(async () => ((await viewsOf(pixel)).length === before + 6 ? viewsOf(pixel) : undefined));
    const flags = rows
      .slice(before)
      .map((r: { is_proxied: boolean; proxy: string | null; is_bot: boolean; bot_reason: string | null }) => [r.is_proxied, r.proxy, r.is_bot, r.bot_reason]);
    expect(flags).toEqual([
      [true, 'gmail_image_proxy', false, null],
      [true, 'apple_mail_privacy', false, null],
      [true, 'yahoo_mail_proxy', false, null],
      [false, null, true, 'user_agent'],
      [false, null, false, null],
      [false, null, true, 'head_request'],
    ]);
  });

  it('a forged, altered, truncated or unknown token, or a click token, gets a plain 404, never a redirect', async () => {
    const token = externalImage.split('/v/')[1]!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const unknown = viewTokens(api.t.ctx.secrets).sign(987654321);
    const imageId = viewTokens(api.t.ctx.secrets).verify(token)!;
    const asClick = clickTokens(api.t.ctx.secrets).sign(imageId);
    for (const bad of [flip(token, 3), flip(token, 23), token.slice(0, 20), `${token}A`, unknown, asClick, 'x', '..%2f..%2fetc']) {
      const res = await fetchImage(`${api.base}/v/${bad}`);
      expect(res.status, bad).toBe(404);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/plain');
    }
  });

  it('with tracking switched off, images are still answered, unrecorded', async () => {
    const otherPixel = await trackedImage(api.t.ctx, api.base, { ...target(api.otherWs, null), signatureId: crypto.randomUUID() });
    const fresh = await buildServer(api.t.ctx);
    const url = otherPixel.replace(api.base, await fresh.listen({ host: '127.0.0.1', port: 0 }));
    const res = await fetchImage(url);
    await fresh.close();
    expect(res.status).toBe(200);
    expect(await viewsOf(otherPixel)).toEqual([]);
  });

  it('floods from one address are limited (429), and closing the server writes every view still held', async () => {
    const limited = await buildServer({ ...api.t.ctx, config: { ...api.t.ctx.config, RATE_LIMIT_VIEWS: 3 } });
    const url = externalImage.replace(api.base, await limited.listen({ host: '127.0.0.1', port: 0 }));
    const before = (await viewsOf(externalImage)).length;
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push((await fetchImage(url)).status);
    expect(answers).toEqual([302, 302, 302, 429, 429]);
    await limited.close();
    expect((await viewsOf(externalImage)).length).toBe(before + 3);
  });
});

describe('the view recorder', () => {
  const api = useApi();

  it('writes a burst of views with one statement, each once, keeps views through a failed write, and retention prunes old ones', async () => {
    const { pool, statements } = failingOncePool(api.t.ctx.pool);
    const recorder = new ViewRecorder(pool, createLogger('silent'), { flushEveryMs: 60_000 });
    const target = { workspaceId: api.ws, signatureId: crypto.randomUUID(), campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
    const image = await trackedImage(api.t.ctx, api.base, target);
    const imageId = viewTokens(api.t.ctx.secrets).verify(image.split('/v/')[1]!)!;
    const old = new Date(Date.now() - 3 * 86_400_000);
    const views: View[] = Array.from({ length: 500 }, (_, i) => ({
      id: crypto.randomUUID(),
      viewedAt: i < 100 ? old : new Date(),
      imageId,
      countryCode: 'FR',
      viewer: `v${i % 7}`,
      proxy: null,
      botReason: null,
    }));
    for (const v of views) recorder.record(v);
    await recorder.flush(true);
    expect(recorder.pending).toBe(500);
    await recorder.close();
    expect(statements).toHaveLength(2);
    expect(recorder.written).toBe(500);
    const count = async () =>
      (await api.t.ctx.pool.query('select count(*)::int as n from views where teammate_id = $1 and email_id = $2', [target.teammateId, target.emailId])).rows[0]
        .n;
    expect(await count()).toBe(500);
    expect(() => recorder.record(views[0]!)).toThrow(/closed/);
    expect(await pruneViews(api.t.ctx.pool, 2)).toBe(100);
    expect(await count()).toBe(400);
  });
});
