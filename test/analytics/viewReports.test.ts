/**
 * Views in the reports: the rollups count views, proxied, bot and direct views, unique views and
 * unique direct views per total, signature, campaign, teammate and country, and the reports (over
 * real HTTP) add the click-through rate (human clicks ÷ human-or-unknown views, null without them); the
 * figures are people's, each other class beside them. Reports read the
 * rollups only: raw views removed after a rebuild change nothing.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks } from '../../src/analytics/clicks.ts';
import { ctr } from '../../src/analytics/reports.ts';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { insertViews, pruneViews, type View } from '../../src/analytics/views.ts';
import { setEventTracking, updatePrivacySettings } from '../../src/db/workspaces.ts';
import { useApi } from '../api/helpers.ts';
import { trackedImage, trackedLink } from '../helpers/tracking.ts';

describe('views in the reports', () => {
  const api = useApi();
  const [sigA, sigB, sigC, campaign] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  const [t1, t2, t3] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];

  const image = async (signatureId: string, teammateId: string, campaignId: string | null) => {
    const target = { workspaceId: api.ws, signatureId, campaignId, teammateId, emailId: crypto.randomUUID() };
    const image = await trackedImage(api.t.ctx, api.base, target);
    return { target, imageId: viewTokens(api.t.ctx.secrets).verify(image.split('/v/')[1]!)! };
  };
  const link = async (target: { workspaceId: string; signatureId: string; campaignId: null; teammateId: string; emailId: string }) => {
    const tracked = await trackedLink(api.t.ctx, api.base, target, 'https://acme.test/');
    return clickTokens(api.t.ctx.secrets).verify(tracked.split('/c/')[1]!)!;
  };
  const view = (imageId: string, viewer: string, flags: { proxy?: string; bot?: string } = {}): View => ({
    id: crypto.randomUUID(),
    viewedAt: new Date(),
    imageId,
    countryCode: 'DE',
    viewer,
    proxy: flags.proxy ?? null,
    botReason: flags.bot ?? null,
  });
  const click = (linkId: string, isBot: boolean, target: { signatureId: string; emailId: string }) => ({
    id: crypto.randomUUID(),
    clickedAt: new Date(),
    linkId,
    anchorId: crypto.randomUUID(),
    signatureId: target.signatureId,
    emailId: target.emailId,
    countryCode: 'DE',
    clicker: crypto.randomUUID(),
    isBot,
    botReason: isBot ? 'user_agent' : null,
  });

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    // Unique views are a per-person figure: null in reports at the new workspace's `aggregate` (reportModes.test.ts).
    await updatePrivacySettings(api.t.ctx.pool, api.ws, { views_tracking: 'per_person' });
    const a = await image(sigA, t1, campaign);
    const b = await image(sigB, t2, null);
    // Signature A: 4 fetches (3 direct by 2 viewers, p1's second a repeat that counts nowhere; 1 through Gmail's proxy); B: 1 bot view.
    await insertViews(api.t.ctx.pool, [
      view(a.imageId, 'p1'),
      view(a.imageId, 'p1'),
      view(a.imageId, 'p2'),
      view(a.imageId, 'g', { proxy: 'gmail_image_proxy' }),
      view(b.imageId, 'b', { bot: 'user_agent' }),
    ]);
    // Clicks: A one human and one bot; C (no views) one human.
    const linkA = await link({ ...a.target, campaignId: null });
    const c = { workspaceId: api.ws, signatureId: sigC, campaignId: null, teammateId: t3, emailId: crypto.randomUUID() };
    const linkC = await link(c);
    await insertClicks(api.t.ctx.pool, [click(linkA, false, a.target), click(linkA, true, a.target), click(linkC, false, c)]);
    await rebuildRollups(api.t.ctx.pool, { workspaceId: api.ws });
  });

  it('the overview counts views, proxied, bot and direct views, unique views, and the click-through rate', async () => {
    const res = await api.call('GET', '/v1/analytics/overview?granularity=hourly&date_from=' + new Date().toISOString().slice(0, 10));
    expect(res.status).toBe(200);
    expect(res.body.data.totals).toMatchObject({
      views: 2,
      all_views: 4,
      direct_views: 2,
      proxied_views: 1,
      bot_views: 1,
      unique_views: 2,
      unique_direct_views: 2,
      human_clicks: 2,
      ctr: 1,
    });
    const points = res.body.data.series as { views: number; proxied_views: number; unique_views: number }[];
    expect(points.reduce((n, p) => n + p.views, 0)).toBe(2);
    expect(points.reduce((n, p) => n + p.proxied_views, 0)).toBe(1);
  });

  it('per signature, campaign and teammate: views and CTR, null where there are no views', async () => {
    const signatures = (await api.call('GET', '/v1/analytics/signatures')).body.data as Record<string, unknown>[];
    const bySig = Object.fromEntries(signatures.map((s) => [s.signature_template_uuid, s]));
    expect(bySig[sigA]).toMatchObject({
      views: 2,
      all_views: 3,
      direct_views: 2,
      proxied_views: 1,
      unique_views: 2,
      unique_direct_views: 2,
      human_clicks: 1,
      ctr: 0.5,
    });
    expect(bySig[sigB]).toMatchObject({ views: 0, all_views: 1, bot_views: 1, direct_views: 0, unique_direct_views: 0, clicks: 0, ctr: null });
    expect(bySig[sigC]).toMatchObject({ views: 0, human_clicks: 1, ctr: null });
    const campaigns = (await api.call('GET', '/v1/analytics/campaigns')).body.data;
    expect(campaigns).toEqual([expect.objectContaining({ marketing_campaign_uuid: campaign, views: 2, all_views: 3, unique_views: 2, clicks: 0, ctr: 0 })]);
    const teammates = (await api.call('GET', '/v1/analytics/teammates')).body.data as Record<string, unknown>[];
    expect(Object.fromEntries(teammates.map((t) => [t.teammate_uuid, [t.views, t.ctr]]))).toEqual({ [t1]: [2, 0.5], [t2]: [0, null], [t3]: [0, null] });
    const countries = (await api.call('GET', '/v1/analytics/countries')).body.data;
    expect(countries).toEqual([expect.objectContaining({ country_code: 'DE', views: 2, all_views: 4, ctr: 1 })]);
  });

  it('CSV files carry the view columns', async () => {
    const r = await fetch(`${api.base}/v1/analytics/signatures?format=csv`, { headers: { authorization: `Bearer ${api.key}` } });
    const [header, ...lines] = (await r.text()).trimEnd().split('\n');
    const cols = header!.split(',');
    for (const c of ['views', 'direct_views', 'proxied_views', 'bot_views', 'unique_views', 'unique_direct_views', 'ctr']) expect(cols).toContain(c);
    const rowC = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [cols[i], v]))).find((x) => x.signature_template_uuid === sigC)!;
    expect(rowC).toMatchObject({ views: '0', ctr: '' });
  });

  it('reports read the rollups: raw views pruned after a rebuild change nothing', async () => {
    expect(await pruneViews(api.t.ctx.pool, -1)).toBe(5);
    const res = await api.call('GET', '/v1/analytics/overview');
    expect(res.body.data.totals).toMatchObject({ views: 2, all_views: 4, unique_views: 2, ctr: 1 });
  });

  it('CTR is human clicks over views, four decimals', () => {
    expect(ctr(1, 3)).toBe(0.3333);
    expect(ctr(0, 0)).toBeNull();
    expect(ctr(2, 0)).toBeNull();
  });
});
