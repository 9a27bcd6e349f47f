/**
 * Repeats are not people (docs/analytics.md, "Repeats"): the same client following the same link
 * again within 30 minutes counts once; more than 10 clicks of one link by one client in an hour are
 * a bot's; the same for views (more than 60 fetches), proxied views aside. Raw rows stay as they
 * came, so the rule is applied again at every rebuild.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks, type Click } from '../../src/analytics/clicks.ts';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { insertViews, type View } from '../../src/analytics/views.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { useApi } from '../api/helpers.ts';
import { trackedImage, trackedLink } from '../helpers/tracking.ts';

describe('repeats are not people', () => {
  const api = useApi();
  const target = () => ({ workspaceId: api.ws, signatureId: crypto.randomUUID(), campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() });
  /** Two hours ago, or the start of the UTC day when that is later: every row stays within today. */
  const start = () => Math.max(Date.now() - 2 * 3600_000, Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()));
  const totals = async (sig: string) =>
    ((await api.call('GET', '/v1/analytics/signatures')).body.data as Record<string, number | string>[]).find((s) => s.signature_template_uuid === sig);

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
  });

  it('clicks: one client following one link again within 30 minutes counts once; a burst is a bot; raw rows stay', async () => {
    const t = target();
    const link = await trackedLink(api.t.ctx, api.base, t, 'https://acme.test/');
    const linkId = clickTokens(api.t.ctx.secrets).verify(link.split('/c/')[1]!)!;
    const t0 = start();
    const click = (clicker: string, at: number): Click => ({
      id: clickTokens(api.t.ctx.secrets).clickId(linkId),
      clickedAt: new Date(at),
      linkId,
      anchorId: '',
      signatureId: t.signatureId,
      emailId: t.emailId,
      countryCode: 'DE',
      clicker,
      isBot: false,
      botReason: null,
    });
    const rows: Click[] = [];
    // One client, 620 follows within a few minutes, with a browser's user agent.
    for (let i = 0; i < 620; i++) rows.push(click('flooder', t0 + i * 200));
    // A person clicking three times in 5 minutes, and another twice 40 minutes apart.
    for (const m of [0, 2, 5]) rows.push(click('reader', t0 + m * 60_000));
    for (const m of [0, 40]) rows.push(click('returner', t0 + m * 60_000));
    await insertClicks(api.t.ctx.pool, rows);
    await rebuildRollups(api.t.ctx.pool, { workspaceId: api.ws });
    expect(await totals(t.signatureId)).toMatchObject({ clicks: 4, human_clicks: 3, bot_clicks: 1, unique_clickers: 2 });
    expect((await api.t.ctx.pool.query('select count(*)::int as n from clicks where link_id = $1', [linkId])).rows[0].n).toBe(625);
  });

  it('views: one viewer fetching one image again within 30 minutes is one view; 3,000 fetches are one bot view; a proxy is never a repeat', async () => {
    const t = target();
    const image = await trackedImage(api.t.ctx, api.base, t);
    const imageId = viewTokens(api.t.ctx.secrets).verify(image.split('/v/')[1]!)!;
    const t0 = start();
    const view = (viewer: string, at: number, proxy: string | null = null): View => ({ id: crypto.randomUUID(), viewedAt: new Date(at), imageId, countryCode: 'DE', viewer, proxy, botReason: null });
    const rows: View[] = [];
    for (let i = 0; i < 3000; i++) rows.push(view('flooder', t0 + i * 20));
    for (const m of [0, 1]) rows.push(view('reader', t0 + m * 60_000));
    for (let i = 0; i < 5; i++) rows.push(view('gmail', t0 + i * 1000, 'gmail_image_proxy'));
    await insertViews(api.t.ctx.pool, rows);
    await rebuildRollups(api.t.ctx.pool, { workspaceId: api.ws });
    expect(await totals(t.signatureId)).toMatchObject({ views: 7, bot_views: 1, proxied_views: 5, direct_views: 1 });
    expect((await api.t.ctx.pool.query('select count(*)::int as n from views where image_id = $1', [imageId])).rows[0].n).toBe(3007);
  });
});
