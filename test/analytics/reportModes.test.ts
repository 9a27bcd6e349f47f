/**
 * The spec's report endpoints answer in every tracking mode (docs/privacy.md): the figures a mode
 * does not keep are null, never a number that would read as people: unique viewers unless views are
 * `per_person`, every view figure when views are `off`, unique clickers unless clicks are
 * `per_person`, every click figure (and CTR, clicks per mailbox) when clicks are `off`. Over real
 * HTTP, so the response schemas are checked too; the CSV shows a withheld figure as an empty cell.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks } from '../../src/analytics/clicks.ts';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { insertViews } from '../../src/analytics/views.ts';
import { updatePrivacySettings, type TrackingMode } from '../../src/db/workspaces.ts';
import { useApi } from '../api/helpers.ts';
import { trackedImage, trackedLink } from '../helpers/tracking.ts';

const UNIQUE_VIEWS = ['unique_views', 'unique_direct_views'];
const VIEWS = ['views', 'direct_views', 'proxied_views', 'bot_views', 'scanner_views', 'proxy_views', 'unknown_views', 'all_views'];
const CLICKS = ['clicks', 'human_clicks', 'bot_clicks', 'scanner_clicks', 'proxy_clicks', 'unknown_clicks', 'all_clicks'];
const POINT_VIEWS = ['views', 'proxied_views', 'scanner_views', 'proxy_views', 'unknown_views'];
const POINT_CLICKS = ['clicks', 'human_clicks', 'bot_clicks', 'scanner_clicks', 'proxy_clicks', 'unknown_clicks'];

type Row = Record<string, unknown>;
const nulls = (row: Row, fields: string[]) => fields.filter((f) => row[f] === null);
const numbers = (row: Row, fields: string[]) => fields.filter((f) => typeof row[f] === 'number');

describe('reports in every tracking mode', () => {
  const api = useApi();
  const signatureId = crypto.randomUUID();
  const target = { workspaceId: '', signatureId, campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
  let anchorId = '';

  beforeAll(async () => {
    target.workspaceId = api.ws;
    const image = await trackedImage(api.t.ctx, api.base, target);
    const imageId = viewTokens(api.t.ctx.secrets).verify(image.split('/v/')[1]!)!;
    const view = (viewer: string) => ({ id: crypto.randomUUID(), viewedAt: new Date(), imageId, countryCode: 'DE', viewer, proxy: null, botReason: null });
    await insertViews(api.t.ctx.pool, [view('p1'), view('p2')]);
    const tracked = await trackedLink(api.t.ctx, api.base, target, 'https://acme.test/');
    const linkId = clickTokens(api.t.ctx.secrets).verify(tracked.split('/c/')[1]!)!;
    anchorId = crypto.randomUUID();
    const click = (clicker: string) => ({
      id: crypto.randomUUID(),
      clickedAt: new Date(),
      linkId,
      anchorId,
      signatureId,
      emailId: target.emailId,
      countryCode: 'DE',
      clicker,
      isBot: false,
      botReason: null,
    });
    await insertClicks(api.t.ctx.pool, [click('c1'), click('c2')]);
    await rebuildRollups(api.t.ctx.pool, { workspaceId: api.ws });
    const anchors = (await api.call('GET', '/v1/anchors')).body.data as Row[];
    anchorId = String(anchors[0]?.anchor_uuid ?? anchorId);
  });

  /** Every report's rows with metrics, under the current settings: totals and series points apart. */
  async function reports(): Promise<{ rows: [string, Row][]; points: [string, Row][] }> {
    const overview = await api.call('GET', '/v1/analytics/overview');
    const anchor = await api.call('GET', `/v1/anchors/${anchorId}/analytics`);
    const rows: [string, Row][] = [
      ['overview', overview.body.data.totals],
      ['anchor', anchor.body.data.totals],
    ];
    for (const path of ['/v1/analytics/signatures', '/v1/analytics/teammates', '/v1/analytics/countries', '/v1/anchors']) {
      const res = await api.call('GET', path);
      expect(res.status, path).toBe(200);
      for (const row of res.body.data as Row[]) rows.push([path, row]);
    }
    expect(overview.status).toBe(200);
    expect(anchor.status).toBe(200);
    const points: [string, Row][] = [
      ...(overview.body.data.series as Row[]).map((p): [string, Row] => ['overview', p]),
      ...(anchor.body.data.series as Row[]).map((p): [string, Row] => ['anchor', p]),
    ];
    return { rows, points };
  }

  const modes = async (views: TrackingMode, clicks: TrackingMode) =>
    updatePrivacySettings(api.t.ctx.pool, api.ws, { views_tracking: views, clicks_tracking: clicks });

  it('per_person for both: every figure is a number', async () => {
    await modes('per_person', 'per_person');
    const { rows, points } = await reports();
    expect(rows.length).toBeGreaterThanOrEqual(6);
    for (const [where, row] of rows) expect(nulls(row, [...UNIQUE_VIEWS, ...VIEWS, ...CLICKS, 'unique_clickers']), where).toEqual([]);
    const overview = rows[0]![1];
    expect(overview).toMatchObject({ views: 2, unique_views: 2, clicks: 2, unique_clickers: 2, ctr: 1 });
    for (const [where, p] of points) expect(nulls(p, [...POINT_VIEWS, ...POINT_CLICKS, 'unique_views', 'unique_clickers']), where).toEqual([]);
  });

  it('views aggregate, clicks per_person: unique viewers are null, the counts stay', async () => {
    await modes('aggregate', 'per_person');
    const { rows, points } = await reports();
    for (const [where, row] of rows) {
      expect(nulls(row, [...UNIQUE_VIEWS, ...VIEWS, ...CLICKS, 'unique_clickers']), where).toEqual(UNIQUE_VIEWS);
      expect(numbers(row, [...VIEWS, ...CLICKS, 'unique_clickers']), where).toHaveLength(VIEWS.length + CLICKS.length + 1);
    }
    expect(rows[0]![1]).toMatchObject({ views: 2, unique_views: null, unique_clickers: 2, ctr: 1 });
    for (const [where, p] of points) expect(nulls(p, [...POINT_VIEWS, ...POINT_CLICKS, 'unique_views', 'unique_clickers']), where).toEqual(['unique_views']);
  });

  it('clicks aggregate: unique clickers are null, the click counts stay', async () => {
    await modes('per_person', 'aggregate');
    const { rows, points } = await reports();
    for (const [where, row] of rows) expect(nulls(row, [...UNIQUE_VIEWS, ...VIEWS, ...CLICKS, 'unique_clickers']), where).toEqual(['unique_clickers']);
    expect(rows[0]![1]).toMatchObject({ clicks: 2, unique_clickers: null, unique_views: 2 });
    for (const [where, p] of points) expect(nulls(p, [...POINT_VIEWS, ...POINT_CLICKS, 'unique_views', 'unique_clickers']), where).toEqual(['unique_clickers']);
  });

  it('views off: every view figure and the CTR are null; clicks still count', async () => {
    await modes('off', 'per_person');
    const { rows, points } = await reports();
    for (const [where, row] of rows) {
      expect(nulls(row, [...VIEWS, ...UNIQUE_VIEWS, 'ctr']), where).toEqual([...VIEWS, ...UNIQUE_VIEWS, 'ctr']);
      expect(nulls(row, [...CLICKS, 'unique_clickers']), where).toEqual([]);
    }
    for (const [where, p] of points) expect(nulls(p, [...POINT_VIEWS, 'unique_views', ...POINT_CLICKS]), where).toEqual([...POINT_VIEWS, 'unique_views']);
  });

  it('clicks off: every click figure, the CTR and clicks per mailbox are null; views still count', async () => {
    await modes('aggregate', 'off');
    const { rows, points } = await reports();
    for (const [where, row] of rows) {
      expect(nulls(row, [...CLICKS, 'unique_clickers', 'ctr']), where).toEqual([...CLICKS, 'unique_clickers', 'ctr']);
      expect(numbers(row, VIEWS), where).toEqual(VIEWS);
    }
    expect(rows[0]![1]).toMatchObject({ clicks_per_mailbox: null, views: 2, visitors: 0, conversions: 0 });
    for (const [where, p] of points)
      expect(nulls(p, [...POINT_CLICKS, 'unique_clickers', ...POINT_VIEWS]), where).toEqual([...POINT_CLICKS, 'unique_clickers']);

    // The CSV: a withheld figure is an empty cell, a kept one its number.
    const csv = await (await fetch(`${api.base}/v1/analytics/signatures?format=csv`, { headers: { authorization: `Bearer ${api.key}` } })).text();
    const [header, line] = csv
      .trim()
      .split('\n')
      .map((l) => l.split(','));
    const cell = (name: string) => line![header!.indexOf(name)];
    expect([cell('clicks'), cell('unique_clickers'), cell('views')]).toEqual(['', '', '2']);
  });
});
