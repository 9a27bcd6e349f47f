/**
 * What a browser claims never steers the API's conversion (docs/analytics.md, "Trust"), over real
 * HTTP: an API event that takes over the browser event that used its `event_id` first is
 * attributed, valued and delivered exactly as a fresh API event would be (the three attacks of
 * issue 41: credit hijack, credit dropped, wrong value delivered); a conversion.recorded already
 * sent for the browser's version is followed by one that says it supersedes it; a browser cannot use
 * up a click id before the back end's conversion; a negative browser value is no money; a click id
 * whose click is gone (pruned, never written) attributes nothing.
 */
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { insertClicks, pruneClicks } from '../../src/analytics/clicks.ts';
import { clickTokens } from '../../src/analytics/token.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { useApi } from '../api/helpers.ts';
import { trackedLink } from '../helpers/tracking.ts';

const DAY = 86_400_000;

describe('a browser claim never steers the API', () => {
  const api = useApi();
  let trackingId: string;
  const tokens = () => clickTokens(api.t.ctx.secrets);

  /** A click id as the redirect hands it out (issued at `at`), its link and the teammate it credits. */
  const click = async (at = Date.now()) => {
    const ids = { workspaceId: api.ws, signatureId: crypto.randomUUID(), campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
    const link = await trackedLink(api.t.ctx, api.base, ids, `https://shop.test/${crypto.randomUUID()}`);
    const linkId = tokens().verify(link.split('/c/')[1]!)!;
    return { clickId: tokens().clickId(linkId, at), linkId, ids, teammate: ids.teammateId };
  };
  const post = async (event: Record<string, unknown>) => {
    const r = await api.call('POST', '/v1/analytics/events', { event });
    expect(r.status).toBe(200);
    return r.body.data;
  };
  const browser = async (event: Record<string, unknown>) => {
    const r = await fetch(`${api.base}/t/${trackingId}/events`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ event }) });
    expect(r.status).toBe(200);
  };
  const row = async (eventId: string) =>
    (
      await api.t.ctx.pool.query(
        `select name, value, claimed_value, currency, source, click_id, teammate_id::text, unattributed_reason, conversion_emitted from recorded_events where workspace_id = $1 and event_id = $2`,
        [api.ws, eventId],
      )
    ).rows[0];
  /** The conversion.recorded payloads of one event_id, oldest first. */
  const delivered = async (eventId: string) =>
    (
      await api.t.ctx.pool.query(
        `select payload from events where workspace_id = $1 and type = 'conversion.recorded' and payload->>'event_id' = $2 order by occurred_at, id`,
        [api.ws, eventId],
      )
    ).rows.map((r) => r.payload);
  const settings = async (s: Record<string, unknown>) =>
    expect((await api.call('PATCH', '/v1/workspace/analytics_settings', { analytics_settings: s })).status).toBe(200);
  /** Prints one replayed attack: what the API answered, the stored row and every conversion.recorded of its event_id. */
  const replay = async (attack: string, eventId: string, answer?: unknown) => {
    const sent = (await delivered(eventId)).map(({ value, currency, source, attribution, supersedes, withdrawn }) => ({
      value,
      currency,
      source,
      teammate: attribution.teammate_uuid,
      supersedes,
      withdrawn,
    }));
    console.log(
      `${attack}\n  answer: ${JSON.stringify(answer ?? null)}\n  stored: ${JSON.stringify(await row(eventId))}\n  conversion.recorded: ${JSON.stringify(sent)}`,
    );
  };
  /** Runs `steps` with the workspace's browser values on (cap 1000), then switches them off again. */
  const withBrowserValues = async (steps: () => Promise<void>) => {
    await settings({ browser_values_enabled: true });
    try {
      await steps();
    } finally {
      await settings({ browser_values_enabled: false });
    }
  };
  /** A visitor the back end identified, its first touch the click `c`. */
  const identified = async (userId: string, c: { clickId: string }) => void (await post({ name: 'identify', user_id: userId, click_id: c.clickId }));

  beforeAll(async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    trackingId = (await api.t.ctx.pool.query('select event_tracking_id from workspaces where id = $1', [api.ws])).rows[0].event_tracking_id;
  });

  it("credit hijack: the browser pre-claims the event_id with its own click; the API conversion still credits the visitor's first touch", async () => {
    const real = await click();
    const attacker = await click();
    await identified('cust-hijack', real);
    await browser({ name: 'purchase', event_id: 'order-hijack', click_id: attacker.clickId, value: 5, currency: 'EUR' });
    const answer = await post({ name: 'purchase', value: 900, currency: 'EUR', event_id: 'order-hijack', user_id: 'cust-hijack' });
    await replay(`credit hijack (first touch: teammate ${real.teammate}, browser's click: teammate ${attacker.teammate})`, 'order-hijack', answer);
    expect(answer).toEqual({ name: 'purchase', value: 900, currency: 'EUR', click_id: '', source: 'api', status: 'accepted', outcome: 'upgraded' });
    expect(await row('order-hijack')).toMatchObject({ value: 900, source: 'api', click_id: null, teammate_id: real.teammate, unattributed_reason: null });
    const sent = await delivered('order-hijack');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      value: 900,
      currency: 'EUR',
      source: 'api',
      visitor: { user_id: 'cust-hijack' },
      attribution: { teammate_uuid: real.teammate },
    });
    expect(sent[0]).not.toHaveProperty('supersedes');
  });

  it("credit hijack through an anonymous id: the browser's anonymous id, whose visitor its own click brought, decides nothing and breaks nothing", async () => {
    const real = await click();
    const attacker = await click();
    await identified('cust-anon', real);
    await browser({ name: 'page_view', anonymous_id: 'anon-attacker', click_id: attacker.clickId });
    await browser({ name: 'purchase', event_id: 'order-anon', value: 5, currency: 'EUR', anonymous_id: 'anon-attacker' });
    const answer = await post({ name: 'purchase', value: 700, currency: 'EUR', event_id: 'order-anon', user_id: 'cust-anon' });
    expect(answer).toMatchObject({ value: 700, click_id: '', outcome: 'upgraded' });
    expect(await row('order-anon')).toMatchObject({ teammate_id: real.teammate });
    expect(await delivered('order-anon')).toMatchObject([
      { value: 700, visitor: { anonymous_id: null, user_id: 'cust-anon' }, attribution: { teammate_uuid: real.teammate } },
    ]);
    // The back end may send both ids of two different visitors: the event is kept, each visitor its own.
    expect(
      (await post({ name: 'purchase', value: 1, currency: 'EUR', event_id: 'order-anon-2', user_id: 'cust-anon', anonymous_id: 'anon-attacker' })).outcome,
    ).toBe('recorded');
    expect(await row('order-anon-2')).toMatchObject({ teammate_id: real.teammate });
  });

  it('credit dropped: the browser pre-claims the event_id with a spent click id; the API conversion is still attributed and delivered', async () => {
    const spent = await click();
    await post({ name: 'purchase', value: 10, currency: 'EUR', event_id: 'spends-it', click_id: spent.clickId });
    const real = await click();
    await identified('cust-dropped', real);
    await browser({ name: 'purchase', event_id: 'order-dropped', click_id: spent.clickId });
    await replay(
      `credit dropped (first touch: teammate ${real.teammate})`,
      'order-dropped',
      await post({ name: 'purchase', value: 300, currency: 'EUR', event_id: 'order-dropped', user_id: 'cust-dropped' }),
    );
    expect(await row('order-dropped')).toMatchObject({
      value: 300,
      click_id: null,
      teammate_id: real.teammate,
      unattributed_reason: null,
      conversion_emitted: true,
    });
    expect(await delivered('order-dropped')).toMatchObject([{ value: 300, source: 'api', attribution: { teammate_uuid: real.teammate } }]);
  });

  it("wrong value delivered: with browser values on, the API's 900 EUR follows the browser's 1, saying it supersedes it", async () => {
    await withBrowserValues(async () => {
      const c = await click();
      await browser({ name: 'purchase', event_id: 'order-value', click_id: c.clickId, value: 1, currency: 'USD' });
      const [first] = await delivered('order-value');
      expect(first).toMatchObject({ value: 1, source: 'browser' });
      await replay(
        'wrong value delivered',
        'order-value',
        await post({ name: 'purchase', value: 900, currency: 'EUR', event_id: 'order-value', click_id: c.clickId }),
      );
      expect(await row('order-value')).toMatchObject({ value: 900, currency: 'EUR', source: 'api', teammate_id: c.teammate });
      const sent = await delivered('order-value');
      expect(sent).toHaveLength(2);
      expect(sent[1]).toMatchObject({ value: 900, currency: 'EUR', source: 'api', attribution: { teammate_uuid: c.teammate } });
      expect(sent[1].supersedes).toEqual({ source: 'browser', occurred_at: first.occurred_at });
      expect(sent[1].withdrawn).toBe(false);
      expect(Date.parse(sent[1].occurred_at)).toBeGreaterThanOrEqual(Date.parse(first.occurred_at));
      // A retry of the API call changes nothing and sends nothing.
      expect((await post({ name: 'purchase', value: 900, currency: 'EUR', event_id: 'order-value', click_id: c.clickId })).outcome).toBe('duplicate');
      expect(await delivered('order-value')).toHaveLength(2);
    });
  });

  it('a browser conversion the API does not confirm as one is withdrawn by the superseding delivery', async () => {
    await withBrowserValues(async () => {
      const c = await click();
      await browser({ name: 'purchase', event_id: 'order-withdrawn', click_id: c.clickId, value: 40, currency: 'EUR' });
      // The back end says this event_id was a sign-up, with no value and no click.
      const answer = await post({ name: 'signup', event_id: 'order-withdrawn' });
      expect(answer).toMatchObject({ name: 'signup', value: null, click_id: '', outcome: 'upgraded' });
      expect(await row('order-withdrawn')).toMatchObject({ name: 'signup', value: null, click_id: null, teammate_id: null });
      const sent = await delivered('order-withdrawn');
      expect(sent).toHaveLength(2);
      expect(sent[1]).toMatchObject({
        name: 'signup',
        value: 0,
        source: 'api',
        withdrawn: true,
        supersedes: { source: 'browser', occurred_at: sent[0].occurred_at },
      });
      expect(sent[1].attribution).toEqual({ teammate_uuid: '', signature_template_uuid: '', anchor_uuid: '', email_uuid: '', marketing_campaign_uuid: '' });
    });
  });

  it("browser conversions do not use up a click id for the API's", async () => {
    await withBrowserValues(async () => {
      const c = await click();
      await browser({ name: 'purchase', event_id: 'crowd-1', click_id: c.clickId, value: 1, currency: 'EUR' });
      await post({ name: 'purchase', value: 250, currency: 'EUR', event_id: 'crowd-2', click_id: c.clickId });
      expect(await row('crowd-2')).toMatchObject({ value: 250, teammate_id: c.teammate, unattributed_reason: null });
      expect(await delivered('crowd-2')).toHaveLength(1);
    });
  });

  it('a negative browser value is no money, even with browser values on', async () => {
    await withBrowserValues(async () => {
      const c = await click();
      await browser({ name: 'purchase', event_id: 'refund-forged', click_id: c.clickId, value: -250, currency: 'EUR' });
      await replay('browser value -250, browser values on', 'refund-forged');
      expect(await row('refund-forged')).toMatchObject({ value: null, claimed_value: -250, source: 'browser' });
      expect(await delivered('refund-forged')).toEqual([]);
      // The API may record a refund.
      await post({ name: 'refund', event_id: 'refund-real', click_id: (await click()).clickId, value: -250, currency: 'EUR' });
      expect(await delivered('refund-real')).toMatchObject([{ value: -250, source: 'api' }]);
    });
  });

  it('a click id whose click was pruned, or was never written, attributes nothing', async () => {
    const old = await click(Date.now() - 10 * DAY);
    await insertClicks(api.t.ctx.pool, [
      {
        id: old.clickId,
        clickedAt: new Date(Date.now() - 10 * DAY),
        linkId: old.linkId,
        anchorId: '',
        signatureId: old.ids.signatureId,
        emailId: old.ids.emailId,
        countryCode: '',
        clicker: 'c',
        isBot: false,
        botReason: null,
      },
    ]);
    await post({ name: 'page_view', event_id: 'before-prune', click_id: old.clickId });
    expect(await row('before-prune')).toMatchObject({ teammate_id: old.teammate, unattributed_reason: null });
    expect(await pruneClicks(api.t.ctx.pool, 5)).toBeGreaterThan(0);
    for (const n of [1, 2, 3]) await post({ name: 'purchase', value: 100, currency: 'EUR', event_id: `after-prune-${n}`, click_id: old.clickId });
    for (const n of [1, 2, 3]) expect(await row(`after-prune-${n}`)).toMatchObject({ value: 100, teammate_id: null, unattributed_reason: 'click_not_found' });
    await replay('pruned click id, third conversion', 'after-prune-3');
    // A genuine click id issued an hour ago whose click was never written.
    const lost = await click(Date.now() - 3600_000);
    await post({ name: 'purchase', value: 100, currency: 'EUR', event_id: 'never-written', click_id: lost.clickId });
    expect(await row('never-written')).toMatchObject({ teammate_id: null, unattributed_reason: 'click_not_found' });
    // A click id just issued (its click is held a few seconds before it is written) attributes.
    const fresh = await click();
    await post({ name: 'purchase', value: 100, currency: 'EUR', event_id: 'just-clicked', click_id: fresh.clickId });
    expect(await row('just-clicked')).toMatchObject({ teammate_id: fresh.teammate, unattributed_reason: null });
    expect((await delivered('after-prune-1')).concat(await delivered('never-written'))).toEqual([]);
  });
});
