/**
 * Recorded events and visitors: owner of `recorded_events` and `visitors`, and of the events
 * `visitor.identified` and `conversion.recorded`, written in the same transaction.
 *
 * - **Attribution.** A click id names its link (token.ts), so an event is attributed at once (anchor,
 *   signature, campaign, teammate, address), even before the click itself is written. A click id that
 *   is not genuine, or names another workspace's link, is `unknown_click_id`. An event without a
 *   click id is attributed through its visitor's first touch, when the visitor has one.
 * - **Idempotency.** With an `event_id`, the first event is stored and delivered; the same id again
 *   (in the same workspace) changes nothing and is answered as accepted, with what is stored.
 * - **Visitors.** An event with a `user_id` or `anonymous_id` finds its visitor (by user id first);
 *   an unknown one is created only when the event is click-attributed: visitors are those a
 *   signature brought. Traits merge, `last_seen_at` moves, the first touch stays. A user id seen for
 *   the first time in the workspace fires `visitor.identified`, once; re-identifies do not.
 * - **Conversions.** An event with a trusted `value` that is click-attributed is a conversion:
 *   `conversion.recorded` fires once, with the spec's payload ('' for unresolved attribution).
 * - **Trust** (docs/analytics.md). The API is the source of truth; the browser is not. A browser
 *   value counts as money only with the workspace's `browser_values_enabled`, from 0 up to
 *   `browser_value_cap` (the claimed value is kept in `claimed_value` either way). Browser traits
 *   never overwrite trait keys set through the API (`visitors.api_trait_keys`). An API event whose
 *   `event_id` a browser event used takes that row over and is attributed, valued and delivered as a
 *   fresh API event would be; a conversion.recorded already sent for the browser's version is
 *   followed by one that `supersedes` it. A click attributes within `attribution_window_days` of it
 *   and only while its click row is stored (or in the minutes after its id was issued, before it is
 *   written); a click id sent with conversions attributes at most `conversions_per_click` of them
 *   (API conversions count only the API's). Past any of these, the event is stored unattributed
 *   with `unattributed_reason`.
 */
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import { emitEvent } from '../db/outbox.ts';
import { analyticsSettings, retentionDays, type AnalyticsSettings } from '../db/workspaces.ts';
import { clickIdIssuedAt, type ClickTokens } from './token.ts';
import {
  conversionBody,
  identifiedBody,
  type Attribution,
  type ConversionReplaces,
  type EventInput,
  type RecordResult,
  type StoredEvent,
  type VisitorRow,
} from './eventBodies.ts';

/** An event row's attribution columns (link, anchor, signature, campaign, teammate, address), all null when unattributed. */
const attributionParams = (a: Attribution | null) => [
  a?.linkId ?? null,
  a?.anchorId ?? null,
  a?.signatureId ?? null,
  a?.campaignId ?? null,
  a?.teammateId ?? null,
  a?.emailId ?? null,
];

async function attributionOf(db: Queryable, workspaceId: string, linkId: string, clickId: string): Promise<Attribution | null> {
  const { rows } = await db.query<Attribution>(
    `select l.id::text as "linkId", l.anchor_id as "anchorId", l.signature_id as "signatureId", case when a.source_kind = 'campaign' then a.source_id end as "campaignId",
            l.teammate_id as "teammateId", l.email_id as "emailId"
       from anchor_links l join anchors a on a.id = l.anchor_id where l.workspace_id = $1 and l.id = $2`,
    [workspaceId, linkId],
  );
  return rows[0] ? { ...rows[0], clickId } : null;
}

/** Serializes writers of one key (an event id, a visitor id) within the transaction. */
async function lock(db: Queryable, ...parts: string[]): Promise<void> {
  await db.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [JSON.stringify(parts)]);
}

/** The visitor of this event, created or updated; whether its user id is new to the workspace. */
async function touchVisitor(
  db: Queryable,
  ws: string,
  e: EventInput,
  attribution: Attribution | null,
): Promise<{ visitor: VisitorRow | null; identified: boolean }> {
  if (e.userId === null && e.anonymousId === null) return { visitor: null, identified: false };
  if (e.userId !== null) await lock(db, ws, 'user', e.userId);
  if (e.anonymousId !== null) await lock(db, ws, 'anonymous', e.anonymousId);
  const { rows } = await db.query<VisitorRow>(
    `select id, user_id, anonymous_id, traits, first_click_id, first_link_id::text, first_seen_at from visitors
      where workspace_id = $1 and (user_id = $2 or anonymous_id = $3) order by (user_id = $2) desc nulls last limit 1 for update`,
    [ws, e.userId, e.anonymousId],
  );
  let found = rows[0];
  // An anonymous id already identified as somebody else: this user is another visitor.
  if (found && e.userId !== null && found.user_id !== null && found.user_id !== e.userId) found = undefined;
  if (!found) {
    if (!attribution) return { visitor: null, identified: false };
    const anonymousFree = e.anonymousId !== null && !rows.some((r) => r.anonymous_id === e.anonymousId);
    const created = await db.query<VisitorRow>(
      `insert into visitors (workspace_id, user_id, anonymous_id, traits, first_click_id, first_link_id, first_seen_at, last_seen_at, api_trait_keys)
       values ($1, $2, $3, $4, $5, $6, now(), now(), case when $7 then array(select jsonb_object_keys($4::jsonb)) else '{}' end)
       returning id, user_id, anonymous_id, traits, first_click_id, first_link_id::text, first_seen_at`,
      [ws, e.userId, anonymousFree ? e.anonymousId : null, e.traits, attribution.clickId, attribution.linkId, e.source === 'api'],
    );
    return { visitor: created.rows[0]!, identified: e.userId !== null };
  }
  const updated = await db.query<VisitorRow>(
    `update visitors set user_id = coalesce(user_id, $2),
            anonymous_id = coalesce(anonymous_id, (select $3::text where not exists (select from visitors o where o.workspace_id = visitors.workspace_id and o.anonymous_id = $3))),
            traits = traits || case when $7 then $4::jsonb
                                    else (select coalesce(jsonb_object_agg(k, v), '{}') from jsonb_each($4::jsonb) as b(k, v) where not k = any(api_trait_keys)) end,
            api_trait_keys = case when $7 then array(select distinct x from unnest(api_trait_keys || array(select jsonb_object_keys($4::jsonb))) as u(x) order by x)
                                  else api_trait_keys end,
            first_click_id = coalesce(first_click_id, $5), first_link_id = coalesce(first_link_id, $6), last_seen_at = now(), updated_at = now()
      where id = $1
      returning id, user_id, anonymous_id, traits, first_click_id, first_link_id::text, first_seen_at`,
    [found.id, e.userId, e.anonymousId, e.traits, attribution?.clickId ?? null, attribution?.linkId ?? null, e.source === 'api'],
  );
  return { visitor: updated.rows[0]!, identified: e.userId !== null && found.user_id === null };
}

async function settingsOf(db: Queryable, ws: string): Promise<AnalyticsSettings> {
  return (await analyticsSettings(db, ws)) ?? { browser_values_enabled: false, browser_value_cap: 0, attribution_window_days: 30, conversions_per_click: 1 };
}

/**
 * The value that counts as money: the API's always; the browser's only when the workspace says so,
 * from 0 up to its cap (a negative amount, a refund, only from the API).
 */
export function trustedValue(e: Pick<EventInput, 'value' | 'source'>, s: AnalyticsSettings): number | null {
  if (e.value === null || e.source === 'api') return e.value;
  return s.browser_values_enabled && e.value >= 0 && e.value <= s.browser_value_cap ? e.value : null;
}

type Unattributed = 'attribution_window' | 'conversions_per_click' | 'click_not_found';

/** How long a click id without its click row counts as a click not written yet (held about 3 s). */
const NEW_CLICK_SECONDS = 300;

/**
 * Why the click `a` may not attribute this event: its row is gone (pruned, or never written) and
 * its id was not issued within NEW_CLICK_SECONDS; it is older than the window (a click not written
 * yet is new); or, for a conversion sent with its click id, the click id has attributed
 * `conversions_per_click` conversions already. An API conversion counts only the API's: a browser
 * cannot use a click id up before the back end's conversion arrives.
 */
async function clickRefusal(
  db: Queryable,
  ws: string,
  a: Attribution,
  s: AnalyticsSettings,
  e: { conversionWithId: boolean; source: EventInput['source'] },
  except: string | null,
): Promise<Unattributed | null> {
  if (e.conversionWithId) await lock(db, ws, 'click', a.clickId);
  const { rows } = await db.query<{ missing: boolean; expired: boolean; conversions: number }>(
    `select c.id is null and not $6::timestamptz between now() - make_interval(secs => $7) and now() + interval '1 minute' as missing,
            coalesce(c.clicked_at < now() - make_interval(days => $3), false) as expired,
            case when $4 then (select count(*)::int from recorded_events where workspace_id = $1 and click_id = $2 and value is not null and link_id is not null
                                 and ($5::uuid is null or id <> $5) and ($8 = 'browser' or source = 'api')) else 0 end as conversions
       from (select) one left join clicks c on c.id = $2 and c.workspace_id = $1`,
    [ws, a.clickId, s.attribution_window_days, e.conversionWithId, except, clickIdIssuedAt(a.clickId), NEW_CLICK_SECONDS, e.source],
  );
  const r = rows[0]!;
  if (r.missing) return 'click_not_found';
  if (r.expired) return 'attribution_window';
  return e.conversionWithId && r.conversions >= s.conversions_per_click ? 'conversions_per_click' : null;
}

/** What an event is stored as: its attribution (or why its click did not attribute), value and visitor. */
interface Attributed {
  a: Attribution | null;
  unattributed: Unattributed | null;
  value: number | null;
  visitor: VisitorRow | null;
  identified: boolean;
  conversion: boolean;
}

/**
 * Attributes one event from what it carries alone: its click id (`direct`), else its visitor's
 * first touch. A fresh event and one that takes over a browser row (`except`, left out of the
 * counts) go through here alike, so that nothing stored before decides the credit.
 */
async function attribute(
  db: Queryable,
  ws: string,
  e: EventInput,
  direct: Attribution | null,
  s: AnalyticsSettings,
  except: string | null,
): Promise<Attributed> {
  const value = trustedValue(e, s);
  let a = direct;
  let unattributed = a ? await clickRefusal(db, ws, a, s, { conversionWithId: value !== null, source: e.source }, except) : null;
  if (unattributed) a = null;
  const { visitor, identified } = await touchVisitor(db, ws, e, a);
  if (!a && !unattributed && visitor?.first_link_id) {
    a = await attributionOf(db, ws, visitor.first_link_id, visitor.first_click_id!);
    unattributed = a ? await clickRefusal(db, ws, a, s, { conversionWithId: false, source: e.source }, except) : null;
    if (unattributed) a = null;
  }
  return { a, unattributed, value, visitor, identified, conversion: value !== null && a !== null };
}

async function insertEvent(db: Queryable, ws: string, e: EventInput, st: Attributed): Promise<{ id: string; recorded_at: Date; country_code: string }> {
  const a = st.a;
  const { rows } = await db.query<{ id: string; recorded_at: Date; country_code: string }>(
    `insert into recorded_events (workspace_id, event_id, name, value, currency, source, click_id, link_id, anchor_id, signature_id, campaign_id, teammate_id, email_id,
                                  country_code, visitor_id, anonymous_id, user_id, properties, claimed_value, unattributed_reason, conversion_emitted)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
             coalesce((select country_code from clicks where id = $7 and workspace_id = $1), $14, ''), $15, $16, $17, $18, $19, $20, $21)
     returning id, recorded_at, country_code`,
    [
      ws,
      e.eventId,
      e.name,
      st.value,
      e.currency,
      e.source,
      e.clickId,
      ...attributionParams(a),
      e.countryCode ?? null,
      st.visitor?.id ?? null,
      e.anonymousId,
      e.userId,
      e.properties,
      e.value,
      st.unattributed,
      st.conversion,
    ],
  );
  return rows[0]!;
}

interface ExistingEvent {
  id: string;
  source: EventInput['source'];
  name: string;
  value: number | null;
  currency: string;
  click_id: string | null;
  conversion_emitted: boolean;
  recorded_at: Date;
}

/** What the answer shows: the stored event. */
const storedOf = (r: Pick<ExistingEvent, 'name' | 'value' | 'currency' | 'click_id' | 'source'>): StoredEvent => ({
  name: r.name,
  value: r.value,
  currency: r.currency,
  clickId: r.click_id,
  source: r.source,
});

/**
 * An API event whose `event_id` a browser event already used takes the row over: it is attributed,
 * valued and delivered exactly as a fresh API event would be, from what the API sent alone (the
 * browser's click id, anonymous id, value and properties decide nothing and are not kept). When
 * conversion.recorded had fired for the browser's version, the API's fires with `supersedes`
 * naming it, and with `withdrawn: true` when the API's version is no conversion.
 */
async function takeOver(db: Queryable, ws: string, old: ExistingEvent, e: EventInput, direct: Attribution | null, s: AnalyticsSettings): Promise<RecordResult> {
  const st = await attribute(db, ws, e, direct, s, old.id);
  const a = st.a;
  await db.query(
    `update recorded_events set name = $3, value = $4, claimed_value = $5, currency = $6, source = $7, click_id = $8, link_id = $9, anchor_id = $10, signature_id = $11,
            campaign_id = $12, teammate_id = $13, email_id = $14, visitor_id = $15, anonymous_id = $16, user_id = $17, properties = $18, unattributed_reason = $19,
            country_code = coalesce((select country_code from clicks where id = $8 and workspace_id = $1), ''),
            conversion_emitted = conversion_emitted or $20, upgraded_at = now()
      where workspace_id = $1 and id = $2`,
    [
      ws,
      old.id,
      e.name,
      st.value,
      e.value,
      e.currency,
      e.source,
      e.clickId,
      ...attributionParams(a),
      st.visitor?.id ?? null,
      e.anonymousId,
      e.userId,
      e.properties,
      st.unattributed,
      st.conversion,
    ],
  );
  if (st.identified && st.visitor) await emitIdentified(db, ws, st.visitor, e.source, a);
  const supersedes = old.conversion_emitted ? { source: old.source, occurred_at: old.recorded_at.toISOString() } : undefined;
  if (st.conversion || supersedes)
    await emitConversion(db, ws, { ...e, value: st.value }, a, new Date(), supersedes && { supersedes, withdrawn: !st.conversion });
  return { status: 'accepted', id: old.id, duplicate: false, outcome: 'upgraded', stored: storedOf({ ...e, click_id: e.clickId, value: st.value }) };
}

/**
 * Records one event in its own transaction, with its visitor and webhook events. A `click_id` that
 * is forged or of another workspace answers `unknown_click_id` and records nothing; with
 * `unknownClickId: 'unattributed'` (the browser endpoint) the event is recorded without it.
 */
export async function recordEvent(
  pool: pg.Pool,
  tokens: ClickTokens,
  workspaceId: string,
  input: EventInput,
  opts: { unknownClickId?: 'error' | 'unattributed' } = {},
): Promise<RecordResult> {
  const keep = opts.unknownClickId === 'unattributed';
  const linkId = input.clickId === null ? null : tokens.verifyClickId(input.clickId);
  if (input.clickId !== null && linkId === null && !keep) return { status: 'unknown_click_id' };
  return withTx(pool, async (db) => {
    const attribution = linkId === null ? null : await attributionOf(db, workspaceId, linkId, input.clickId!);
    if (input.clickId !== null && !attribution && !keep) return { status: 'unknown_click_id' };
    const e = attribution || input.clickId === null ? input : { ...input, clickId: null };
    const s = await settingsOf(db, workspaceId);
    if (e.eventId !== null) {
      await lock(db, workspaceId, 'event', e.eventId);
      const { rows } = await db.query<ExistingEvent>(
        'select id, source, name, value, currency, click_id, conversion_emitted, recorded_at from recorded_events where workspace_id = $1 and event_id = $2',
        [workspaceId, e.eventId],
      );
      if (rows[0] && rows[0].source === 'browser' && e.source === 'api') return takeOver(db, workspaceId, rows[0], e, attribution, s);
      if (rows[0]) return { status: 'accepted', id: rows[0].id, duplicate: true, outcome: 'duplicate', stored: storedOf(rows[0]) };
    }
    const st = await attribute(db, workspaceId, e, attribution, s, null);
    const row = await insertEvent(db, workspaceId, e, st);
    if (st.identified && st.visitor) await emitIdentified(db, workspaceId, st.visitor, e.source, st.a);
    if (st.conversion) await emitConversion(db, workspaceId, { ...e, value: st.value }, st.a, row.recorded_at);
    return { status: 'accepted', id: row.id, duplicate: false, outcome: 'recorded', stored: storedOf({ ...e, click_id: e.clickId, value: st.value }) };
  });
}

async function emitIdentified(db: Queryable, ws: string, v: VisitorRow, source: string, a: Attribution | null): Promise<void> {
  const first = v.first_link_id && v.first_link_id !== a?.linkId ? await attributionOf(db, ws, v.first_link_id, v.first_click_id!) : a;
  await emitEvent(db, ws, 'visitor.identified', identifiedBody(v, source, first));
}

async function emitConversion(db: Queryable, ws: string, e: EventInput, a: Attribution | null, at: Date, replaces?: ConversionReplaces): Promise<void> {
  await emitEvent(db, ws, 'conversion.recorded', conversionBody(e, a, replaces), at);
}

/**
 * Retention: removes recorded events, and visitors not seen since, older than the workspace's
 * `analytics_retention_days` or `defaultDays` (their rollups stay). Returns the events removed.
 */
export async function pruneEvents(db: Queryable, defaultDays: number): Promise<number> {
  const w = await retentionDays(db, defaultDays);
  const older = (col: string) => `${col} < now() - make_interval(days => w.days)`;
  const kept = 'unnest($1::uuid[], $2::int[]) as w(id, days)';
  const { rowCount } = await db.query(`delete from recorded_events e using ${kept} where w.id = e.workspace_id and ${older('e.recorded_at')}`, [w.ids, w.days]);
  await db.query(`delete from visitors v using ${kept} where w.id = v.workspace_id and ${older('v.last_seen_at')}`, [w.ids, w.days]);
  return rowCount ?? 0;
}

/** Where a visitor's events are: its own, and those sent with its anonymous or user id. */
export const EVENTS_OF_VISITOR = `from recorded_events e join visitors v on v.id = $2 and v.workspace_id = e.workspace_id
  where e.workspace_id = $1 and (e.visitor_id = v.id or e.anonymous_id = v.anonymous_id or e.user_id = v.user_id)`;

/**
 * Erases visitors (docs/privacy.md): each with every event tied to it. Returns, per visitor, the
 * click ids it was brought by or sent (the caller removes those clicks) and its ids, for the outbox.
 */
export async function deleteVisitors(
  db: Queryable,
  ws: string,
  visitorIds: string[],
): Promise<{ clickIds: string[]; visitors: { id: string; user_id: string | null; anonymous_id: string | null }[] }> {
  const clickIds = new Set<string>();
  const visitors: { id: string; user_id: string | null; anonymous_id: string | null }[] = [];
  for (const id of visitorIds) {
    const { rows } = await db.query<{ click_id: string }>(
      `delete from recorded_events e using (select e.id ${EVENTS_OF_VISITOR}) x where e.id = x.id and e.click_id is not null returning e.click_id`,
      [ws, id],
    );
    await db.query(`delete from recorded_events e using (select e.id ${EVENTS_OF_VISITOR}) x where e.id = x.id`, [ws, id]);
    const v = await db.query<{ id: string; user_id: string | null; anonymous_id: string | null; first_click_id: string | null }>(
      'delete from visitors where workspace_id = $1 and id = $2 returning id, user_id, anonymous_id, first_click_id',
      [ws, id],
    );
    for (const r of rows) clickIds.add(r.click_id);
    for (const r of v.rows) {
      if (r.first_click_id) clickIds.add(r.first_click_id);
      visitors.push({ id: r.id, user_id: r.user_id, anonymous_id: r.anonymous_id });
    }
  }
  return { clickIds: [...clickIds], visitors };
}

/** The visitors the given clicks brought (an opt-out erases them). */
export async function visitorsOfClicks(db: Queryable, ws: string, clickIds: string[]): Promise<string[]> {
  if (!clickIds.length) return [];
  const { rows } = await db.query<{ id: string }>(
    `select distinct v.id from visitors v where v.workspace_id = $1 and (v.first_click_id = any($2::text[])
        or exists (select from recorded_events e where e.workspace_id = $1 and e.visitor_id = v.id and e.click_id = any($2::text[])))`,
    [ws, clickIds],
  );
  return rows.map((r) => r.id);
}
