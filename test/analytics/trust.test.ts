/**
 * What a browser may decide in the analytics (docs/analytics.md, "Trust"), over real HTTP: a
 * browser value is not money unless the workspace says so (and then up to its cap); browser traits
 * never overwrite traits set through the API; an API event upgrades the browser event that used its
 * event_id first and fires conversion.recorded once; a click attributes within the attribution
 * window and a click id attributes a bounded number of conversions.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks } from '../../src/analytics/clicks.ts';
import { clickTokens } from '../../src/analytics/token.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { eventCount } from '../helpers/fixtures.ts';
import { useApi } from '../api/helpers.ts';
import { trackedLink } from '../helpers/tracking.ts';

describe('analytics trust', () => {
  const api = useApi();
  let trackingId: string;
  const tokens = () => clickTokens(api.t.ctx.secrets);

  /** A click id as the redirect hands it out, and its link id. */
  const click = async () => {
    const ids = { workspaceId: api.ws, signatureId: crypto.randomUUID(), campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
    const link = await trackedLink(api.t.ctx, api.base, ids, `https://shop.test/${crypto.randomUUID()}`);
    const linkId = tokens().verify(link.split('/c/')[1]!)!;
    return { clickId: tokens().clickId(linkId), linkId, ids };
  };
  const post = (event: unknown) => api.call('POST', '/v1/analytics/events', { event });
  const browser = async (event: unknown) => {
    const r = await fetch(`${api.base}/t/${trackingId}/events`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ event }) });
    expect(r.status).toBe(200);
  };
  const row = async (eventId: string) =>
    (
      await api.t.ctx.pool.query(
        'select value, claimed_value, source, link_id::text, unattributed_reason from recorded_events where workspace_id = $1 and event_id = $2',
        [api.ws, eventId],
      )
    ).rows[0];
  const conversions = async () =>
    (await api.t.ctx.pool.query(`select payload from events where workspace_id = $1 and type = 'conversion.recorded' order by occurred_at`, [api.ws])).rows.map(
      (r) => r.payload,
    );
  const settings = (s: Record<string, unknown>) => api.call('PATCH', '/v1/workspace/analytics_settings', { analytics_settings: s });

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    trackingId = (await api.t.ctx.pool.query('select event_tracking_id from workspaces where id = $1', [api.ws])).rows[0].event_tracking_id;
  });

  it('the settings have safe defaults, change through the API, and refuse what is out of range naming the field', async () => {
    expect((await api.call('GET', '/v1/workspace/analytics_settings')).body.data).toEqual({
      browser_values_enabled: false,
      browser_value_cap: 1000,
      attribution_window_days: 30,
      conversions_per_click: 1,
    });
    const bad = await settings({ attribution_window_days: 0, browser_value_cap: -1 });
    expect(bad.status).toBe(422);
    expect(bad.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'analytics_settings.attribution_window_days',
      'analytics_settings.browser_value_cap',
    ]);
    expect((await api.call('GET', '/v1/workspace/analytics_settings', undefined, api.otherKey)).body.data.attribution_window_days).toBe(30);
  });

  it('a browser value is not money by default: stored as claimed, no conversion, no value in reports', async () => {
    const { clickId } = await click();
    await browser({ name: 'purchase', value: 999999999999, currency: 'USD', click_id: clickId, event_id: 'forged-1' });
    expect(await row('forged-1')).toMatchObject({ value: null, claimed_value: 999999999999, source: 'browser', link_id: expect.any(String) });
    expect(await conversions()).toEqual([]);
  });

  it('with browser values on, a browser value counts up to the cap', async () => {
    await settings({ browser_values_enabled: true, browser_value_cap: 100 });
    await browser({ name: 'purchase', value: 99, currency: 'USD', click_id: (await click()).clickId, event_id: 'b-under-cap' });
    await browser({ name: 'purchase', value: 101, currency: 'USD', click_id: (await click()).clickId, event_id: 'b-over-cap' });
    expect(await row('b-under-cap')).toMatchObject({ value: 99 });
    expect(await row('b-over-cap')).toMatchObject({ value: null, claimed_value: 101 });
    expect((await conversions()).map((c) => [c.event_id, c.value, c.source])).toEqual([['b-under-cap', 99, 'browser']]);
  });

  it('a click id attributes at most conversions_per_click conversions (a replay is stored unattributed)', async () => {
    const { clickId } = await click();
    for (const id of ['replay-1', 'replay-2', 'replay-3']) await browser({ name: 'purchase', value: 10, currency: 'USD', click_id: clickId, event_id: id });
    expect(await row('replay-1')).toMatchObject({ value: 10, link_id: expect.any(String), unattributed_reason: null });
    expect(await row('replay-3')).toMatchObject({ link_id: null, unattributed_reason: 'conversions_per_click' });
    expect((await conversions()).filter((c) => String(c.event_id).startsWith('replay'))).toHaveLength(1);
    await settings({ browser_values_enabled: false });
  });

  it('a click older than the attribution window attributes nothing', async () => {
    const { clickId, linkId, ids } = await click();
    const long = new Date(Date.now() - 31 * 86_400_000);
    await insertClicks(api.t.ctx.pool, [
      {
        id: clickId,
        clickedAt: long,
        linkId,
        anchorId: '',
        signatureId: ids.signatureId,
        emailId: ids.emailId,
        countryCode: '',
        clicker: 'c',
        isBot: false,
        botReason: null,
      },
    ]);
    expect((await post({ name: 'purchase', value: 20, currency: 'EUR', click_id: clickId, event_id: 'late-1' })).status).toBe(200);
    expect(await row('late-1')).toMatchObject({ value: 20, link_id: null, unattributed_reason: 'attribution_window' });
    expect((await conversions()).some((c) => c.event_id === 'late-1')).toBe(false);
    await settings({ attribution_window_days: 60 });
    expect((await post({ name: 'purchase', value: 20, currency: 'EUR', click_id: clickId, event_id: 'late-2' })).status).toBe(200);
    expect(await row('late-2')).toMatchObject({ link_id: expect.any(String), unattributed_reason: null });
    await settings({ attribution_window_days: 30 });
  });

  it('browser traits never overwrite traits set through the API', async () => {
    const { clickId } = await click();
    await post({ name: 'identify', user_id: 'customer-1001', click_id: clickId, traits: { plan: 'pro', email: 'ann@customer.test' } });
    await browser({ name: 'identify', user_id: 'customer-1001', traits: { plan: 'HACKED', email: 'evil@attacker.test', theme: 'dark' } });
    const traits = async () =>
      (await api.t.ctx.pool.query(`select traits from visitors where workspace_id = $1 and user_id = 'customer-1001'`, [api.ws])).rows[0].traits;
    expect(await traits()).toEqual({ plan: 'pro', email: 'ann@customer.test', theme: 'dark' });
    // The API may change them, and may set what the browser set.
    await post({ name: 'identify', user_id: 'customer-1001', traits: { plan: 'enterprise', theme: 'light' } });
    await browser({ name: 'identify', user_id: 'customer-1001', traits: { theme: 'HACKED' } });
    expect(await traits()).toEqual({ plan: 'enterprise', email: 'ann@customer.test', theme: 'light' });
  });

  it('an API event whose event_id a browser event used first upgrades it, says so, and fires conversion.recorded once', async () => {
    const { clickId, ids } = await click();
    await browser({ name: 'purchase', value: 0.01, currency: 'USD', event_id: 'order-5555', anonymous_id: 'anon-5555' });
    expect(await row('order-5555')).toMatchObject({ value: null, source: 'browser', link_id: null });
    const before = await eventCount(api.t.ctx, api.ws, 'conversion.recorded');
    const up = await post({ name: 'purchase', value: 500, currency: 'EUR', event_id: 'order-5555', click_id: clickId });
    expect(up.status).toBe(200);
    expect(up.body.data).toEqual({ name: 'purchase', value: 500, currency: 'EUR', click_id: clickId, source: 'api', status: 'accepted', outcome: 'upgraded' });
    expect(await row('order-5555')).toMatchObject({ value: 500, source: 'api', link_id: expect.any(String) });
    const again = await post({ name: 'purchase', value: 500, currency: 'EUR', event_id: 'order-5555', click_id: clickId });
    expect(again.body.data.outcome).toBe('duplicate');
    // The browser cannot take it back.
    await browser({ name: 'purchase', value: 1, currency: 'USD', event_id: 'order-5555' });
    expect(await row('order-5555')).toMatchObject({ value: 500, source: 'api' });
    expect(await eventCount(api.t.ctx, api.ws, 'conversion.recorded')).toBe(before + 1);
    const fired = (await conversions()).find((c) => c.event_id === 'order-5555');
    // What the API did not send is not taken from the browser's row (browserClaims.test.ts).
    expect(fired).toMatchObject({
      value: 500,
      currency: 'EUR',
      source: 'api',
      visitor: { anonymous_id: null },
      attribution: { signature_template_uuid: ids.signatureId },
    });
    expect(Object.keys(fired).sort()).toEqual([
      'attribution',
      'currency',
      'event_id',
      'name',
      'occurred_at',
      'properties',
      'source',
      'type',
      'value',
      'visitor',
    ]);
    const list = (await api.call('GET', '/v1/analytics/events')).body.data.filter((e: { name: string; value: number }) => e.value === 500);
    expect(list).toHaveLength(1);
  });
});
