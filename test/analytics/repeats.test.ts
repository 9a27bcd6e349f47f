/**
 * Repeats are not people (docs/analytics.md, "Repeats"): the same client following the same link
 * again within 30 minutes counts once; more than 10 clicks of one link by one client in an hour are
 * a bot's; the same for views (more than 60 fetches), proxied views aside. Rotating user agents
 * does not make people: of one address, at most 5 clients a day count on one link. Raw rows stay as
 * they came, so the rules are applied again at every rebuild.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks, type Click } from '../../src/analytics/clicks.ts';
import { ADDRESS_CLIENTS, rebuildRollups as rebuild } from '../../src/analytics/rollups.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { insertViews, type View } from '../../src/analytics/views.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { useApi } from '../api/helpers.ts';
import { waitFor } from '../helpers/cli.ts';
import { trackedImage, trackedLink } from '../helpers/tracking.ts';

describe('repeats are not people', () => {
  const api = useApi();
  const target = () => ({
    workspaceId: api.ws,
    signatureId: crypto.randomUUID(),
    campaignId: null,
    teammateId: crypto.randomUUID(),
    emailId: crypto.randomUUID(),
  });
  /** Two hours ago, or the start of the UTC day when that is later: every row stays within today. */
  const start = () => Math.max(Date.now() - 2 * 3600_000, Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
  const totals = async (sig: string) =>
    ((await api.call('GET', '/v1/analytics/signatures')).body.data as Record<string, number | string>[]).find((s) => s.signature_template_uuid === sig);

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
  });

  /** A tracked link of a new signature, and raw clicks of it by a client (`clicker`) from an `address`. */
  const linkOf = async () => {
    const t = target();
    const link = await trackedLink(api.t.ctx, api.base, t, 'https://acme.test/');
    const linkId = clickTokens(api.t.ctx.secrets).verify(link.split('/c/')[1]!)!;
    const click = (clicker: string, at: number, address?: string): Click => ({
      id: clickTokens(api.t.ctx.secrets).clickId(linkId),
      clickedAt: new Date(at),
      linkId,
      anchorId: '',
      signatureId: t.signatureId,
      emailId: t.emailId,
      countryCode: 'DE',
      clicker,
      address,
      isBot: false,
      botReason: null,
    });
    return { t, link, linkId, click };
  };

  it('clicks: one client following one link again within 30 minutes counts once; a burst is a bot; raw rows stay', async () => {
    const { t, linkId, click } = await linkOf();
    const t0 = start();
    const rows: Click[] = [];
    // One client, 620 follows within a few minutes, with a browser's user agent.
    for (let i = 0; i < 620; i++) rows.push(click('flooder', t0 + i * 200));
    // A person clicking three times in 5 minutes, and another twice 40 minutes apart.
    for (const m of [0, 2, 5]) rows.push(click('reader', t0 + m * 60_000));
    for (const m of [0, 40]) rows.push(click('returner', t0 + m * 60_000));
    await insertClicks(api.t.ctx.pool, rows);
    await rebuild(api.t.ctx.pool, { workspaceId: api.ws });
    expect(await totals(t.signatureId)).toMatchObject({ clicks: 3, all_clicks: 4, human_clicks: 3, bot_clicks: 1, unique_clickers: 2 });
    expect((await api.t.ctx.pool.query('select count(*)::int as n from clicks where link_id = $1', [linkId])).rows[0].n).toBe(625);
  });

  it('clicks: rotating user agents from one address makes no people past the first few clients of the day; an office keeps its few', async () => {
    const t0 = start();
    // One address, 30 user agents, one follow each.
    const rotated = await linkOf();
    await insertClicks(
      api.t.ctx.pool,
      Array.from({ length: 30 }, (_, i) => rotated.click(`agent-${i}`, t0 + i * 1000, 'one-address')),
    );
    // An office behind one address: 4 colleagues, one of them twice; and a second office of 3.
    const office = await linkOf();
    await insertClicks(api.t.ctx.pool, [
      ...['ann', 'bob', 'cem', 'dan'].map((who, i) => office.click(`office-${who}`, t0 + i * 60_000, 'office-a')),
      office.click('office-ann', t0 + 45 * 60_000, 'office-a'),
      ...['eve', 'fay', 'gus'].map((who, i) => office.click(`office-${who}`, t0 + i * 60_000, 'office-b')),
    ]);
    // Rows written before the address was kept: each client is its own address, as before.
    const older = await linkOf();
    await insertClicks(
      api.t.ctx.pool,
      Array.from({ length: 7 }, (_, i) => older.click(`legacy-${i}`, t0 + i * 1000)),
    );
    await api.t.ctx.pool.query(`update clicks set clicker_address = null where link_id = $1`, [older.linkId]);
    await rebuild(api.t.ctx.pool, { workspaceId: api.ws });
    expect(await totals(rotated.t.signatureId)).toMatchObject({
      clicks: ADDRESS_CLIENTS,
      all_clicks: 30,
      human_clicks: ADDRESS_CLIENTS,
      bot_clicks: 30 - ADDRESS_CLIENTS,
      unique_clickers: ADDRESS_CLIENTS,
    });
    expect(await totals(office.t.signatureId)).toMatchObject({ clicks: 8, human_clicks: 8, bot_clicks: 0, unique_clickers: 7 });
    expect(await totals(older.t.signatureId)).toMatchObject({ human_clicks: 7, unique_clickers: 7 });
  });

  it('the attack over HTTP: 30 follows of one link from one address with 30 user agents are 5 human clicks and 5 unique clickers', async () => {
    const { t, link, linkId } = await linkOf();
    for (let i = 0; i < 30; i++) {
      const res = await fetch(link, {
        redirect: 'manual',
        headers: { 'user-agent': `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${100 + i}.0.0.0 Safari/537.36` },
      });
      expect(res.status).toBe(302);
    }
    await waitFor(
      async () => (await api.t.ctx.pool.query('select count(*)::int as n from clicks where link_id = $1', [linkId])).rows[0].n === 30 || undefined,
      30_000,
    );
    await rebuild(api.t.ctx.pool, { workspaceId: api.ws });
    const figures = await totals(t.signatureId);
    console.log(
      `30 user agents, one address, one link: ${JSON.stringify({ all_clicks: figures?.all_clicks, clicks: figures?.clicks, human_clicks: figures?.human_clicks, bot_clicks: figures?.bot_clicks, unique_clickers: figures?.unique_clickers })}`,
    );
    expect(figures).toMatchObject({
      clicks: ADDRESS_CLIENTS,
      all_clicks: 30,
      human_clicks: ADDRESS_CLIENTS,
      bot_clicks: 30 - ADDRESS_CLIENTS,
      unique_clickers: ADDRESS_CLIENTS,
    });
  });

  it('views: one viewer fetching one image again within 30 minutes is one view; 3,000 fetches are one bot view; a proxy is never a repeat', async () => {
    const t = target();
    const image = await trackedImage(api.t.ctx, api.base, t);
    const imageId = viewTokens(api.t.ctx.secrets).verify(image.split('/v/')[1]!)!;
    const t0 = start();
    const view = (viewer: string, at: number, proxy: string | null = null): View => ({
      id: crypto.randomUUID(),
      viewedAt: new Date(at),
      imageId,
      countryCode: 'DE',
      viewer,
      proxy,
      botReason: null,
    });
    const rows: View[] = [];
    for (let i = 0; i < 3000; i++) rows.push(view('flooder', t0 + i * 20));
    for (const m of [0, 1]) rows.push(view('reader', t0 + m * 60_000));
    for (let i = 0; i < 5; i++) rows.push(view('gmail', t0 + i * 1000, 'gmail_image_proxy'));
    await insertViews(api.t.ctx.pool, rows);
    await rebuild(api.t.ctx.pool, { workspaceId: api.ws });
    expect(await totals(t.signatureId)).toMatchObject({ views: 1, all_views: 7, bot_views: 1, proxied_views: 5, direct_views: 1 });
    expect((await api.t.ctx.pool.query('select count(*)::int as n from views where image_id = $1', [imageId])).rows[0].n).toBe(3007);
  });
});
