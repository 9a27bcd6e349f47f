/**
 * GET /c/{token} over real HTTP: the redirect with click_id, the click written in a batch with its
 * attribution, bot and scanner flags, no client address stored; forged and truncated tokens get a
 * 404 page; switched-off tracking; the per-address limit; nothing lost when the server closes.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { ClickRecorder, type Click } from '../../src/analytics/clicks.ts';
import { clickTokens } from '../../src/analytics/token.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { createLogger } from '../../src/log.ts';
import { useApi } from '../api/helpers.ts';
import { waitFor } from '../helpers/cli.ts';
import { failingOncePool } from '../helpers/db.ts';
import { trackedLink, trackedLinks } from '../helpers/tracking.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

describe('click redirects', () => {
  const api = useApi();
  const signatureId = crypto.randomUUID();
  const teammateId = crypto.randomUUID();
  let links: string[];
  let otherLinks: string[];

  const follow = (url: string, ua: string | null = CHROME, method = 'GET') =>
    fetch(url, { redirect: 'manual', method, headers: ua === null ? {} : { 'user-agent': ua } });
  const clickRow = (id: string) => waitFor(async () => (await api.t.ctx.pool.query('select * from clicks where id = $1', [id])).rows[0]);
  const clickIdOf = (res: Response) => new URL(res.headers.get('location')!).searchParams.get('click_id')!;

  /** Tracked links for one address, as an install renders them. */
  const track = async (workspaceId: string, emailId: string, urls: string[]) => {
    return trackedLinks(api.t.ctx, api.base, { workspaceId, signatureId, campaignId: null, teammateId, emailId }, urls);
  };

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    await setEventTracking(api.t.ctx.pool, api.otherWs, true);
    links = await track(api.ws, crypto.randomUUID(), ['https://acme.test/pricing?plan=pro&seats=5#buy', 'https://acme.test/about', 'https://acme.test/jobs']);
    otherLinks = await track(api.otherWs, crypto.randomUUID(), ['https://other.test/']);
  });

  it('answers 302 to the destination with click_id, and records the click with its attribution', async () => {
    const res = await follow(links[0]!);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const clickId = clickIdOf(res);
    expect(location).toBe(`https://acme.test/pricing?plan=pro&seats=5&click_id=${clickId}#buy`);
    const row = await clickRow(clickId);
    expect(row).toMatchObject({
      workspace_id: api.ws,
      signature_id: signatureId,
      teammate_id: teammateId,
      campaign_id: null,
      is_bot: false,
      bot_reason: null,
      country_code: '',
    });
    // The client address is not stored anywhere in the row.
    expect(JSON.stringify(row)).not.toContain('127.0.0.1');
  });

  it('a known bot user agent, no user agent and HEAD requests are recorded as bots', async () => {
    const bot = clickIdOf(await follow(links[1]!, 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'));
    const none = clickIdOf(await follow(links[1]!, null));
    const head = await follow(links[1]!, 'curl/8.5.0 x', 'HEAD');
    expect(head.status).toBe(302);
    expect(await clickRow(bot)).toMatchObject({ is_bot: true, bot_reason: 'user_agent' });
    expect(await clickRow(none)).toMatchObject({ is_bot: true, bot_reason: 'user_agent' });
    expect(await clickRow(clickIdOf(head))).toMatchObject({ is_bot: true, bot_reason: expect.stringMatching(/head_request|user_agent/) });
    // Image proxies fetch images, never links for a person: a click with their user agent is a bot's.
    const proxy = clickIdOf(await follow(links[1]!, 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)'));
    expect(await clickRow(proxy)).toMatchObject({ is_bot: true, bot_reason: 'image_proxy' });
  });

  it('a client following several links of one signature within seconds is a link scanner, on every click of the burst', async () => {
    const ua = `${CHROME} Edg/126.0.0.0`;
    const ids = [];
    for (const l of links) ids.push(clickIdOf(await follow(l, ua)));
    for (const id of ids) expect(await clickRow(id)).toMatchObject({ is_bot: true, bot_reason: 'link_scanner' });
  });

  it('a scanner that sends another user agent for each link is still one client address: every click of the burst is flagged', async () => {
    const ids = [];
    for (const [i, l] of links.entries()) ids.push(clickIdOf(await follow(l, `${CHROME} Rotated/${i}`)));
    for (const id of ids) expect(await clickRow(id)).toMatchObject({ is_bot: true, bot_reason: 'link_scanner' });
  });

  it('a forged, altered, truncated or unknown token gets a 404 page, never a redirect', async () => {
    const token = links[0]!.split('/c/')[1]!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const unknown = clickTokens(api.t.ctx.secrets).sign(987654321);
    const forgedKey = Buffer.concat([Buffer.from('000000000000000001', 'hex').subarray(0, 8), crypto.randomBytes(10)]).toString('base64url');
    for (const bad of [flip(token, 3), flip(token, 23), token.slice(0, 20), `${token}A`, unknown, forgedKey, 'x', '..%2f..%2fetc']) {
      const res = await follow(`${api.base}/c/${bad}`);
      expect(res.status, bad).toBe(404);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(await res.text()).toContain('This link is not valid');
    }
  });

  it('links of another workspace lead to their own destination and are recorded in that workspace only', async () => {
    const res = await follow(otherLinks[0]!);
    expect(res.headers.get('location')).toMatch(/^https:\/\/other\.test\/\?click_id=/);
    const row = await clickRow(clickIdOf(res));
    expect(row.workspace_id).toBe(api.otherWs);
  });

  it('with tracking switched off, links still lead to their destination, without click_id and unrecorded', async () => {
    await setEventTracking(api.t.ctx.pool, api.otherWs, false);
    const fresh = await buildServer(api.t.ctx);
    const url = `${otherLinks[0]!.replace(api.base, await fresh.listen({ host: '127.0.0.1', port: 0 }))}`;
    const before = (await api.t.ctx.pool.query('select count(*)::int as n from clicks')).rows[0].n;
    const res = await follow(url);
    await fresh.close();
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://other.test/');
    expect((await api.t.ctx.pool.query('select count(*)::int as n from clicks')).rows[0].n).toBe(before);
  });

  it('floods from one address are limited (429), and closing the server writes every click still held', async () => {
    const limited = await buildServer({ ...api.t.ctx, config: { ...api.t.ctx.config, RATE_LIMIT_CLICKS: 3 } });
    const url = links[2]!.replace(api.base, await limited.listen({ host: '127.0.0.1', port: 0 }));
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await follow(url, `${CHROME} flood`));
    expect(answers.map((r) => r.status)).toEqual([302, 302, 302, 429, 429]);
    expect(answers[3]!.headers.get('retry-after')).toMatch(/^\d+$/);
    await limited.close();
    const ids = answers.slice(0, 3).map(clickIdOf);
    const { rows } = await api.t.ctx.pool.query('select id from clicks where id = any($1::text[])', [ids]);
    expect(rows).toHaveLength(3);
  });
});

describe('the click recorder', () => {
  const api = useApi();

  it('writes a burst of clicks with one statement, each once, and keeps clicks through a failed write', async () => {
    const { pool, statements } = failingOncePool(api.t.ctx.pool);
    const recorder = new ClickRecorder(pool, createLogger('silent'), { holdMs: 0, flushEveryMs: 60_000 });
    const target = { workspaceId: api.ws, signatureId: crypto.randomUUID(), campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
    const tracked = await trackedLink(api.t.ctx, api.base, target, 'https://acme.test/');
    const linkId = clickTokens(api.t.ctx.secrets).verify(tracked.split('/c/')[1]!)!;
    const clicks: Click[] = Array.from({ length: 500 }, () => ({
      ...target,
      id: crypto.randomUUID(),
      clickedAt: new Date(),
      linkId,
      anchorId: crypto.randomUUID(),
      countryCode: 'FR',
      clicker: crypto.randomUUID(),
      isBot: false,
      botReason: null,
    }));
    for (const c of clicks) recorder.record(c);
    await recorder.flush(true);
    expect(recorder.pending).toBe(500);
    await recorder.close();
    expect(statements).toHaveLength(2);
    expect(recorder.written).toBe(500);
    const { rows } = await api.t.ctx.pool.query('select count(*)::int as n from clicks where id = any($1::text[]) and teammate_id = $2 and email_id = $3', [
      clicks.map((c) => c.id),
      target.teammateId,
      target.emailId,
    ]);
    expect(rows[0].n).toBe(500);
    expect(() => recorder.record(clicks[0]!)).toThrow(/closed/);
  });
});
