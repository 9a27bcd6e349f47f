/**
 * While an experiment runs, each teammate's signature shows the banner of the arm assignArm gives
 * them, in installs and previews alike (the one loader, src/render/load.ts); the links and the view
 * image an install creates carry the arm, so clicks and views join to it; and the counts the
 * analysis reads (src/analytics/experiments.ts) are human clicks and exposures per sender per arm,
 * exposures being human views (views per person) or sender-days of the arm installed.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks } from '../../src/analytics/clicks.ts';
import { experimentCounts } from '../../src/analytics/experiments.ts';
import { insertViews } from '../../src/analytics/views.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { analyse } from '../../src/experiments/analysis.ts';
import { assignArm } from '../../src/experiments/assignment.ts';
import { armsOf, getExperiment } from '../../src/experiments/queries.ts';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { loadRenderSource } from '../../src/render/load.ts';
import { seedIntegration, seedTeammate, tree, useApi } from '../api/helpers.ts';

const HOUR = 3600_000;
const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
const banner = (text: string, href: string) => ({
  type: 'stack',
  children: [
    {
      type: 'text',
      tokens: [
        { type: 'textToken', value: text },
        { type: 'textToken', value: ' Register', href: { text: href } },
      ],
    },
  ],
});

describe('experiment banners in signatures, and the counts per arm', () => {
  const api = useApi();
  let signature: string;
  let campaign: string;
  let experiment: { id: string; arms: { id: string; name: string }[] };
  const people: { id: string; emailId: string }[] = [];
  const armOf = (teammateId: string) =>
    assignArm(
      experiment.id,
      teammateId,
      experiment.arms.map((a) => ({ id: a.id, weight: 1 })),
    );
  const nameOf = (armId: string) => experiment.arms.find((a) => a.id === armId)!.name;
  const install = (p: { id: string; emailId: string }) =>
    renderForAddress(api.t.ctx, { workspaceId: api.ws, teammateId: p.id, signatureId: signature, kind: 'primary', emailId: p.emailId });

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    signature = (await api.call('POST', '/v1/signatures', { signature: { name: 'Main', draft_content: tree('Signature body') } })).body.data.id;
    await api.call('POST', `/v1/signatures/${signature}/publish`);
    await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
    campaign = (
      await api.call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: {
          name: 'Summit',
          content: banner('Campaign banner', 'https://acme.test/summit'),
          signature_template_ids: [signature],
          start_time: at(-HOUR),
          end_time: at(48 * HOUR),
        },
      })
    ).body.data.id;
    expect((await api.call('POST', `/v1/marketing_campaigns/${campaign}/schedule`)).body.data.status).toBe('active');
    // Both arms link the same address: their anchors are told apart by the arm.
    const r = await api.call('POST', `/v1/marketing_campaigns/${campaign}/experiments`, {
      experiment: {
        name: 'Wording',
        mode: 'ab',
        arms: [
          { name: 'Plain', content: banner('Arm Plain', 'https://acme.test/summit') },
          { name: 'Bold', content: banner('Arm Bold', 'https://acme.test/summit') },
        ],
      },
    });
    experiment = r.body.data;
    for (let i = 0; i < 12; i++) {
      const t = await seedTeammate(api.t.ctx.pool, api.ws, `Person ${i}`);
      people.push({ id: t.id, emailId: t.emailIds[0]! });
    }
    expect((await api.call('POST', `/v1/experiments/${experiment.id}/start`)).status).toBe(200);
  });

  it('installs and previews show each teammate the arm assignArm gives them; both arms are in use', async () => {
    const shown = new Set<string>();
    for (const p of people) {
      const arm = armOf(p.id);
      shown.add(arm);
      const out = await install(p);
      expect(out.html).toContain(`Arm ${nameOf(arm)}`);
      expect(out.html).not.toContain('Campaign banner');
      expect(out.campaign).toMatchObject({ id: campaign, armId: arm });
      const preview = await loadRenderSource(api.t.ctx.pool, {
        workspaceId: api.ws,
        signatureId: signature,
        teammate: { id: p.id },
        kind: 'primary',
        content: 'preview',
      });
      expect(preview.ok && preview.source.campaign).toMatchObject({ id: campaign, armId: arm });
      // A reinstall renders the same bytes: no reshuffle.
      expect((await install(p)).hash).toBe(out.hash);
    }
    expect(shown.size).toBe(2);
  });

  it('the links and the view image an install creates carry the arm', async () => {
    for (const p of people) await install(p);
    const { rows: links } = await api.t.ctx.pool.query<{ teammate_id: string; arm_id: string | null }>(
      `select l.teammate_id, a.arm_id from anchor_links l join anchors a on a.id = l.anchor_id where l.workspace_id = $1 and a.source_kind = 'campaign' and a.source_id = $2`,
      [api.ws, campaign],
    );
    expect(links.length).toBe(people.length);
    for (const l of links) expect(l.arm_id).toBe(armOf(l.teammate_id));
    const { rows: anchors } = await api.t.ctx.pool.query<{ n: number }>(`select count(*)::int as n from anchors where workspace_id = $1 and source_id = $2`, [
      api.ws,
      campaign,
    ]);
    expect(anchors[0]!.n).toBe(2);
    const { rows: images } = await api.t.ctx.pool.query<{ teammate_id: string; arm_id: string | null }>(
      `select teammate_id, arm_id from view_images where workspace_id = $1 and campaign_id = $2`,
      [api.ws, campaign],
    );
    expect(images.length).toBe(people.length);
    for (const i of images) expect(i.arm_id).toBe(armOf(i.teammate_id));
  });

  it('counts human clicks and exposures per sender per arm; GET results is analyse() of them', async () => {
    const pool = api.t.ctx.pool;
    for (const p of people) await install(p);
    const { rows: links } = await pool.query<{ id: string; anchor_id: string; teammate_id: string; email_id: string }>(
      `select l.id::text, l.anchor_id, l.teammate_id, l.email_id from anchor_links l join anchors a on a.id = l.anchor_id where l.workspace_id = $1 and a.source_id = $2`,
      [api.ws, campaign],
    );
    const { rows: images } = await pool.query<{ id: string; teammate_id: string }>(
      `select id::text, teammate_id from view_images where workspace_id = $1 and campaign_id = $2`,
      [api.ws, campaign],
    );
    const now = new Date();
    // Sender i: i human clicks, one scanner click, 2i human views (sender 1: none, as behind an image
    // blocker) and one proxied view.
    const clicks = links.flatMap((l) => {
      const i = people.findIndex((p) => p.id === l.teammate_id);
      const click = (cls: 'human' | 'scanner') => ({
        id: crypto.randomUUID(),
        clickedAt: now,
        linkId: l.id,
        anchorId: l.anchor_id,
        signatureId: signature,
        emailId: l.email_id,
        countryCode: 'DE',
        clicker: crypto.randomUUID(),
        isBot: cls !== 'human',
        botReason: cls === 'human' ? null : 'user_agent',
        trafficClass: cls,
      });
      return [...Array.from({ length: i }, () => click('human')), click('scanner')];
    });
    await insertClicks(pool, clicks);
    const views = images.flatMap((img) => {
      const i = people.findIndex((p) => p.id === img.teammate_id);
      const view = (proxy: string | null) => ({
        id: crypto.randomUUID(),
        viewedAt: now,
        imageId: img.id,
        countryCode: 'DE',
        viewer: crypto.randomUUID(),
        proxy,
        botReason: null,
      });
      return [...Array.from({ length: i === 1 ? 0 : 2 * i }, () => view(null)), view('gmail_image_proxy')];
    });
    await insertViews(pool, views);

    const e = (await getExperiment(pool, api.ws, experiment.id))!;
    const arms = await armsOf(pool, api.ws, experiment.id);
    const expected = (exposures: (i: number) => number, clicks: (i: number) => number = (i) => i) =>
      arms.map((a) => ({
        id: a.id,
        name: a.name,
        weight: 1,
        senders: people
          .map((p, i) => ({ p, i }))
          .filter(({ p }) => armOf(p.id) === a.id)
          .map(({ p, i }) => ({ sender: p.id, exposures: exposures(i), clicks: clicks(i) }))
          .sort((x, y) => (x.sender < y.sender ? -1 : 1)),
      }));

    await api.call('PATCH', '/v1/workspace/privacy_settings', { privacy_settings: { views_tracking: 'per_person' } });
    const perPerson = await experimentCounts(pool, e, arms, new Date());
    expect(perPerson.exposure).toBe('human_views');
    // A click shows the banner was seen: sender 1's one click with no view is one exposure.
    expect(perPerson.arms).toEqual(expected((i) => (i === 1 ? 1 : 2 * i)));

    await api.call('PATCH', '/v1/workspace/privacy_settings', { privacy_settings: { views_tracking: 'aggregate' } });
    // Each sender's arm was first installed minutes ago: one started day each; every click fell on that
    // day, so a sender with clicks has one clicked sender-day however many clicks.
    const clickedDays = (i: number) => Math.min(i, 1);
    const aggregate = await experimentCounts(pool, e, arms, new Date());
    expect(aggregate.exposure).toBe('sender_days');
    expect(aggregate.arms).toEqual(expected(() => 1, clickedDays));
    const twoDaysOn = await experimentCounts(pool, e, arms, new Date(Date.now() + 36 * HOUR));
    expect(twoDaysOn.arms).toEqual(expected(() => 2, clickedDays));

    const r = await api.call('GET', `/v1/experiments/${experiment.id}`);
    expect(r.status, r.text).toBe(200);
    const counts = await experimentCounts(pool, e, arms, new Date());
    expect(r.body.data.exposure).toBe('sender_days');
    expect(r.body.data.results).toEqual(analyse({ arms: counts.arms, past: counts.past, policy: {}, mode: 'ab' }));
    expect(r.body.data.results.arms.map((a: { clicks: number }) => a.clicks).reduce((s: number, n: number) => s + n, 0)).toBe(people.length - 1);
  });

  it("a later campaign's experiment counts this campaign among its past banners, as the arms are counted", async () => {
    const pool = api.t.ctx.pool;
    const later = (
      await api.call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: {
          name: 'Later',
          content: banner('Later banner', 'https://acme.test/later'),
          signature_template_ids: [signature],
          start_time: at(-HOUR),
          end_time: at(48 * HOUR),
        },
      })
    ).body.data.id;
    const created = await api.call('POST', `/v1/marketing_campaigns/${later}/experiments`, {
      experiment: {
        name: 'Next',
        mode: 'ab',
        arms: [
          { name: 'A', content: banner('A', 'https://acme.test/a') },
          { name: 'B', content: banner('B', 'https://acme.test/b') },
        ],
      },
    });
    const e = (await getExperiment(pool, api.ws, created.body.data.id))!;
    const arms = await armsOf(pool, api.ws, e.id);
    // The earlier test recorded, for sender i, i human clicks and 2i human views (sender 1: none).
    await api.call('PATCH', '/v1/workspace/privacy_settings', { privacy_settings: { views_tracking: 'per_person' } });
    const humanViews = people.reduce((sum, _, i) => sum + (i === 1 ? 0 : 2 * i), 0);
    const humanClicks = people.reduce((sum, _, i) => sum + i, 0);
    expect((await experimentCounts(pool, e, arms, new Date())).past).toEqual([{ exposures: humanViews, clicks: humanClicks }]);
    // Sender-days: one started day for each sender shown the campaign, and one clicked day for each who had clicks.
    await api.call('PATCH', '/v1/workspace/privacy_settings', { privacy_settings: { views_tracking: 'aggregate' } });
    expect((await experimentCounts(pool, e, arms, new Date())).past).toEqual([{ exposures: people.length, clicks: people.length - 1 }]);
  });

  it("once stopped, the campaign's own banner shows again, for everyone", async () => {
    expect((await api.call('POST', `/v1/experiments/${experiment.id}/stop`)).status).toBe(200);
    for (const p of people.slice(0, 4)) {
      const out = await install(p);
      expect(out.html).toContain('Campaign banner');
      expect(out.campaign).toMatchObject({ id: campaign, armId: null });
    }
  });
});
