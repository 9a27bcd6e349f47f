/**
 * Recorded events, visitors and the public ingest endpoint over real HTTP: validation errors naming
 * the field, errors with remediation (tracking off, unknown click id), idempotency, attribution,
 * the two webhook events once each, workspace isolation, hostile bodies, CORS and limits; and the
 * anchors' 404.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { clickTokens } from '../../src/analytics/token.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { eventCount } from '../helpers/fixtures.ts';
import { useApi } from '../api/helpers.ts';
import { trackedLink } from '../helpers/tracking.ts';

describe('recorded events and visitors', () => {
  const api = useApi();
  let clickId: string;
  let otherClickId: string;
  let anchorId: string;
  let trackingId: string;
  const signatureId = crypto.randomUUID();

  const post = (event: unknown, key?: string) => api.call('POST', '/v1/analytics/events', { event }, key);
  const tokens = () => clickTokens(api.t.ctx.secrets);
  /** A click id as the redirect of a tracked link of `ws` hands it out. */
  const clickOn = async (ws: string) => {
    const link = await trackedLink(
      api.t.ctx,
      api.base,
      { workspaceId: ws, signatureId, campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() },
      'https://acme.test/',
    );
    const linkId = tokens().verify(link.split('/c/')[1]!)!;
    return tokens().clickId(linkId);
  };
  const ingest = (body: string, contentType = 'text/plain;charset=UTF-8', id = trackingId) =>
    fetch(`${api.base}/t/${id}/events`, { method: 'POST', headers: { 'content-type': contentType, origin: 'https://evil.test' }, body });

  beforeAll(async () => {
    clickId = await clickOn(api.ws);
    otherClickId = await clickOn(api.otherWs);
    anchorId = (await api.t.ctx.pool.query('select id from anchors where workspace_id = $1', [api.ws])).rows[0].id;
    trackingId = (await api.t.ctx.pool.query('select event_tracking_id from workspaces where id = $1', [api.ws])).rows[0].event_tracking_id;
  });

  it('with tracking switched off, an event is refused with remediation and the browser endpoint is 404', async () => {
    const r = await post({ name: 'signup' });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({
      error: { code: 'event_tracking_disabled' },
      remediation: { action: 'enable_event_tracking', dashboard_url: expect.any(String), message: expect.any(String) },
    });
    expect((await ingest(JSON.stringify({ event: { name: 'page_view' } }))).status).toBe(404);
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    await setEventTracking(api.t.ctx.pool, api.otherWs, true);
  });

  it('validation errors name the field', async () => {
    const cases: [unknown, string, string][] = [
      [{ value: 3, currency: 'EUR' }, 'event.name', 'required'],
      [{ name: 'buy', value: '12', currency: 'EUR' }, 'event.value', 'invalid_type'],
      [{ name: 'buy', value: 12, currency: 'EURO' }, 'event.currency', 'invalid_currency'],
      [{ name: 'buy', value: 12, currency: 'eur' }, 'event.currency', 'invalid_currency'],
      [{ name: 'buy', value: 12 }, 'event.currency', 'required'],
      [{ name: 'buy', properties: { blob: 'x'.repeat(9000) } }, 'event.properties', 'too_big'],
      [{ name: 'buy', traits: [1, 2] }, 'event.traits', 'invalid_type'],
      [{ name: 'buy', admin: true }, 'event.admin', 'unknown_field'],
      [{ name: 'x'.repeat(201) }, 'event.name', 'too_big'],
    ];
    for (const [event, field, code] of cases) {
      const r = await post(event);
      expect(r.status, JSON.stringify(event).slice(0, 80)).toBe(422);
      expect(r.body.details, field).toContainEqual(expect.objectContaining({ field, code }));
    }
    expect(await api.t.ctx.pool.query('select 1 from recorded_events').then((r) => r.rowCount)).toBe(0);
  });

  it('a forged click id, or one of another workspace, is unknown_click_id with remediation', async () => {
    const forged = clickId.slice(0, 10) + (clickId[10] === 'A' ? 'B' : 'A') + clickId.slice(11);
    for (const id of [forged, otherClickId, 'not-a-click', crypto.randomUUID()]) {
      const r = await post({ name: 'buy', value: 1, currency: 'EUR', click_id: id });
      expect(r.status, id).toBe(422);
      expect(r.body).toMatchObject({ error: { code: 'unknown_click_id' }, remediation: { action: 'check_click_id' } });
    }
  });

  it('an identify with a click creates the visitor and fires visitor.identified once; re-identifies do not', async () => {
    expect((await post({ name: 'identify', user_id: 'u-1', anonymous_id: 'a-1', click_id: clickId, traits: { plan: 'free' } })).status).toBe(200);
    expect((await post({ name: 'identify', user_id: 'u-1', traits: { plan: 'pro', seats: 3 } })).status).toBe(200);
    expect((await post({ name: 'page_view', anonymous_id: 'a-1' })).status).toBe(200);
    expect(await eventCount(api.t.ctx, api.ws, 'visitor.identified')).toBe(1);
    const list = await api.call('GET', '/v1/analytics/visitors');
    expect(list.body.data).toEqual([
      expect.objectContaining({
        distinct_id: 'u-1',
        traits: { plan: 'pro', seats: 3 },
        first_touch: expect.objectContaining({ click_id: clickId, signature_template_id: signatureId }),
      }),
    ]);
    const id = list.body.data[0].id;
    expect((await api.call('GET', `/v1/analytics/visitors/${id}`)).body.data.events).toHaveLength(3);
    expect((await api.call('GET', `/v1/analytics/visitors/${id}`, undefined, api.otherKey)).status).toBe(404);
    expect((await api.call('GET', '/v1/analytics/visitors', undefined, api.otherKey)).body.data).toEqual([]);
  });

  it('an unattributed user gets no visitor and no webhook', async () => {
    expect((await post({ name: 'identify', user_id: 'stranger' })).status).toBe(200);
    expect((await post({ name: 'buy', value: 5, currency: 'USD', user_id: 'stranger' })).status).toBe(200);
    expect(await eventCount(api.t.ctx, api.ws, 'visitor.identified')).toBe(1);
    expect(await eventCount(api.t.ctx, api.ws, 'conversion.recorded')).toBe(0);
  });

  it('a conversion fires conversion.recorded once per event id, attributed through the click or the visitor', async () => {
    const buy = { name: 'purchase', value: 99.9, currency: 'EUR', event_id: 'order-1', user_id: 'u-1', properties: { sku: 'A' } };
    expect((await post(buy)).body.data).toEqual({
      name: 'purchase',
      value: 99.9,
      currency: 'EUR',
      click_id: '',
      source: 'api',
      status: 'accepted',
      outcome: 'recorded',
    });
    expect((await post(buy)).status).toBe(200);
    expect((await post({ ...buy, event_id: 'order-2', click_id: clickId })).status).toBe(200);
    expect(await eventCount(api.t.ctx, api.ws, 'conversion.recorded')).toBe(2);
    const { rows } = await api.t.ctx.pool.query(`select payload from events where workspace_id = $1 and type = 'conversion.recorded' order by occurred_at`, [
      api.ws,
    ]);
    expect(rows[0].payload).toMatchObject({
      event_id: 'order-1',
      value: 99.9,
      attribution: { anchor_uuid: anchorId, signature_template_uuid: signatureId, marketing_campaign_uuid: '' },
    });
    expect((await api.call('GET', '/v1/analytics/events')).body.data.filter((e: { name: string }) => e.name === 'purchase')).toHaveLength(2);
    expect((await api.call('GET', '/v1/analytics/events', undefined, api.otherKey)).body.pagination.total_count).toBe(0);
  });

  it('the browser endpoint: CORS, a forged click id dropped, hostile bodies refused', async () => {
    const pre = await fetch(`${api.base}/t/${trackingId}/events`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.test', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const ok = await ingest(JSON.stringify({ event: { name: 'page_view', anonymous_id: 'b-1', click_id: `${clickId.slice(0, -2)}AA` } }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const row = (await api.t.ctx.pool.query(`select source, link_id from recorded_events where anonymous_id = 'b-1'`)).rows[0];
    expect(row).toEqual({ source: 'browser', link_id: null });
    expect((await ingest('{"event":')).status).toBe(422);
    expect((await ingest(JSON.stringify({ event: { name: 'x', properties: { a: 'y'.repeat(20_000) } } }))).status).toBe(413);
    expect((await ingest(JSON.stringify({ event: { name: 'x' } }), 'text/plain', crypto.randomUUID())).status).toBe(404);
    expect((await ingest(JSON.stringify({ event: { name: 'x' } }), 'text/plain', "' or 1=1 --")).status).toBe(404);
    const bad = await ingest(JSON.stringify({ event: { value: 'lots' } }));
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { details: { field: string }[] }).details.map((d: { field: string }) => d.field).sort()).toEqual([
      'event.name',
      'event.value',
    ]);
    const fields = async (body: string) => ((await (await ingest(body)).json()) as { details: { field: string }[] }).details.map((d) => d.field);
    expect(await fields('{}')).toEqual(['event']);
    expect(await fields(JSON.stringify({ event: { name: 'x\u0000' } }))).toEqual(['event.name']);
    // A click id of another workspace is dropped: nothing is attributed across workspaces.
    expect((await ingest(JSON.stringify({ event: { name: 'buy', value: 1, currency: 'EUR', click_id: otherClickId, anonymous_id: 'b-2' } }))).status).toBe(200);
    expect((await api.t.ctx.pool.query(`select link_id, workspace_id from recorded_events where anonymous_id = 'b-2'`)).rows).toEqual([
      { link_id: null, workspace_id: api.ws },
    ]);
    expect(await eventCount(api.t.ctx, api.otherWs, 'conversion.recorded')).toBe(0);
  });

  it('floods from one address are limited', async () => {
    const limited = await buildServer({ ...api.t.ctx, config: { ...api.t.ctx.config, RATE_LIMIT_INGEST: 2 } });
    const base = await limited.listen({ host: '127.0.0.1', port: 0 });
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await fetch(`${base}/t/${trackingId}/events`, { method: 'POST', body: JSON.stringify({ event: { name: 'flood' } }) })).status);
    await limited.close();
    expect(statuses).toEqual([200, 200, 429, 429]);
  });

  it('the per-tracking-id limit counts events from every address, whatever the letter case of the id', async () => {
    const limited = await buildServer({
      ...api.t.ctx,
      config: { ...api.t.ctx.config, RATE_LIMIT_INGEST: 1000, RATE_LIMIT_INGEST_WORKSPACE: 5, TRUST_PROXY: '127.0.0.1' },
    });
    const base = await limited.listen({ host: '127.0.0.1', port: 0 });
    const answers: [number, string | null][] = [];
    for (let i = 0; i < 7; i++) {
      const id = i % 2 ? trackingId.toUpperCase() : trackingId;
      const r = await fetch(`${base}/t/${id}/events`, {
        method: 'POST',
        headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
        body: JSON.stringify({ event: { name: 'spread' } }),
      });
      answers.push([r.status, r.headers.get('x-ratelimit-limit')]);
    }
    await limited.close();
    expect(answers.map(([s]) => s)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(answers[0]![1]).toBe('5');
  });

  it('an unknown anchor, a non-uuid or another workspace anchor is 404 with the error object; a backwards range is 422', async () => {
    for (const id of [crypto.randomUUID(), 'nope', anchorId]) {
      const r = await api.call('GET', `/v1/anchors/${id}/analytics`, undefined, api.otherKey);
      expect(r.status, id).toBe(404);
      expect(r.body.error).toMatchObject({ type: 'not_found_error', code: 'anchor_not_found' });
    }
    expect((await api.call('GET', `/v1/anchors/${anchorId}/analytics`)).status).toBe(200);
    const back = await api.call('GET', '/v1/analytics/overview?date_from=2026-02-10&date_to=2026-02-01');
    expect(back.status).toBe(422);
    expect(back.body.details[0]).toMatchObject({ field: 'date_to', code: 'before_start' });
    expect((await api.call('GET', '/v1/analytics/overview?granularity=weekly')).body.details[0]).toMatchObject({ field: 'granularity', code: 'invalid_value' });
  });
});
