/**
 * Recorded events and visitors: owner of `recorded_events` and `visitors`, and of the events
 * `visitor.identified` and `conversion.recorded`, written in the same transaction.
 *
 * - **Attribution.** A click id names its link (token.ts), so an event is attributed at once (anchor,
 *   signature, campaign, teammate, address), even before the click itself is written. A click id that
 *   is not genuine, or names another workspace's link, is `unknown_click_id`. An event without a
 *   click id is attributed through its visitor's first touch, when the visitor has one.
 * - **Idempotency.** With an `event_id`, the first event is stored and delivered; the same id again
 *   (in the same workspace) changes nothing and is answered as accepted.
 * - **Visitors.** An event with a `user_id` or `anonymous_id` finds its visitor (by user id first);
 *   an unknown one is created only when the event is click-attributed: visitors are those a
 *   signature brought. Traits merge, `last_seen_at` moves, the first touch stays. A user id seen for
 *   the first time in the workspace fires `visitor.identified`, once; re-identifies do not.
 * - **Conversions.** An event with a trusted `value` that is click-attributed is a conversion:
 *   `conversion.recorded` fires once, with the spec's payload ('' for unresolved attribution).
 * - **Trust** (docs/analytics.md). The API is the source of truth; the browser is not. A browser
 *   value counts as money only with the workspace's `browser_values_enabled`, up to
 *   `browser_value_cap` (the claimed value is kept in `claimed_value` either way). Browser traits
 *   never overwrite trait keys set through the API (`visitors.api_trait_keys`). An API event whose
 *   `event_id` a browser event used upgrades that row and fires conversion.recorded if it has not
 *   fired for it. A click attributes within `attribution_window_days` of it, and a click id sent
 *   with conversions attributes at most `conversions_per_click` of them; past either, the event is
 *   stored unattributed with `unattributed_reason`.
 */
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import { emitEvent } from '../db/outbox.ts';
import { analyticsSettings, type AnalyticsSettings } from '../db/workspaces.ts';
import type { ClickTokens } from './token.ts';

export interface EventInput {
  name: string;
  value: number | null;
  currency: string;
  clickId: string | null;
  eventId: string | null;
  properties: Record<string, unknown>;
  anonymousId: string | null;
  userId: string | null;
  traits: Record<string, unknown>;
  source: 'api' | 'browser';
  /** The client's country, for browser events (the click's country is used when known). */
  countryCode?: string;
}

/** What recording did: stored a new event, found its `event_id` already stored, or upgraded a browser event to the API's. */
export type Outcome = 'recorded' | 'duplicate' | 'upgraded';
export type RecordResult = { status: 'accepted'; id: string; duplicate: boolean; outcome: Outcome } | { status: 'unknown_click_id' };

interface Attribution {
  linkId: string;
  clickId: string;
  anchorId: string;
  signatureId: string;
  campaignId: string | null;
  teammateId: string;
  emailId: string;
}

interface VisitorRow {
  id: string;
  user_id: string | null;
  anonymous_id: string | null;
  traits: Record<string, unknown>;
  first_click_id: string | null;
  first_link_id: string | null;
  first_seen_at: Date;
}

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
async function touchVisitor(db: Queryable, ws: string, e: EventInput, attribution: Attribution | null): Promise<{ visitor: VisitorRow | null; identified: boolean }> {
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
    `update visitors set user_id = coalesce(user_id, $2), anonymous_id = coalesce(anonymous_id, $3),
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

/** The value that counts as money: the API's always; the browser's only when the workspace says so, up to its cap. */
export function trustedValue(e: Pick<EventInput, 'value' | 'source'>, s: AnalyticsSettings): number | null {
  if (e.value === null || e.source === 'api') return e.value;
  return s.browser_values_enabled && Math.abs(e.value) <= s.browser_value_cap ? e.value : null;
}

type Unattributed = 'attribution_window' | 'conversions_per_click';

/**
 * Why the click `a` may not attribute this event: it is older than the window (a click not written
 * yet, within its few seconds' hold, is new), or, for a conversion sent with its click id, the
 * click id has attributed `conversions_per_click` conversions already.
 */
async function clickRefusal(db: Queryable, ws: string, a: Attribution, s: AnalyticsSettings, conversionWithId: boolean, except: string | null): Promise<Unattributed | null> {
  if (conversionWithId) await lock(db, ws, 'click', a.clickId);
  const { rows } = await db.query<{ expired: boolean; conversions: number }>(
    `select coalesce((select clicked_at < now() - make_interval(days => $3) from clicks where id = $2 and workspace_id = $1), false) as expired,
            case when $4 then (select count(*)::int from recorded_events where workspace_id = $1 and click_id = $2 and value is not null and link_id is not null
                                 and ($5::uuid is null or id <> $5)) else 0 end as conversions`,
    [ws, a.clickId, s.attribution_window_days, conversionWithId, except],
  );
  if (rows[0]!.expired) return 'attribution_window';
  return conversionWithId && rows[0]!.conversions >= s.conversions_per_click ? 'conversions_per_click' : null;
}

interface Stored {
  value: number | null;
  unattributed: Unattributed | null;
  conversion: boolean;
}

async function insertEvent(db: Queryable, ws: string, e: EventInput, a: Attribution | null, visitorId: string | null, st: Stored): Promise<{ id: string; recorded_at: Date; country_code: string }> {
  const { rows } = await db.query<{ id: string; recorded_at: Date; country_code: string }>(
    `insert into recorded_events (workspace_id, event_id, name, value, currency, source, click_id, link_id, anchor_id, signature_id, campaign_id, teammate_id, email_id,
                                  country_code, visitor_id, anonymous_id, user_id, properties, claimed_value, unattributed_reason, conversion_emitted)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
             coalesce((select country_code from clicks where id = $7 and workspace_id = $1), $14, ''), $15, $16, $17, $18, $19, $20, $21)
     returning id, recorded_at, country_code`,
    [ws, e.eventId, e.name, st.value, e.currency, e.source, e.clickId, a?.linkId ?? null, a?.anchorId ?? null, a?.signatureId ?? null, a?.campaignId ?? null,
      a?.teammateId ?? null, a?.emailId ?? null, e.countryCode ?? null, visitorId, e.anonymousId, e.userId, e.properties, e.value, st.unattributed, st.conversion],
  );
  return rows[0]!;
}

interface ExistingEvent {
  id: string;
  source: EventInput['source'];
  click_id: string | null;
  link_id: string | null;
  conversion_emitted: boolean;
  anonymous_id: string | null;
}

/**
 * An API event whose `event_id` a browser event already used: the API is the source of truth, so
 * the stored row becomes the API's (name, value, currency, click id and attribution, visitor,
 * properties merged), and conversion.recorded fires now if it has not fired for that row.
 */
async function upgrade(db: Queryable, ws: string, tokens: ClickTokens, old: ExistingEvent, input: EventInput, attribution: Attribution | null, s: AnalyticsSettings): Promise<RecordResult> {
  const e = { ...input, clickId: input.clickId ?? (attribution ? null : old.click_id), anonymousId: input.anonymousId ?? old.anonymous_id };
  let a = attribution;
  if (!a && e.clickId !== null) {
    const linkId = tokens.verifyClickId(e.clickId);
    a = linkId === null ? null : await attributionOf(db, ws, linkId, e.clickId);
  }
  const value = trustedValue(e, s);
  let unattributed = a ? await clickRefusal(db, ws, a, s, value !== null, old.id) : null;
  if (unattributed) a = null;
  const { visitor, identified } = await touchVisitor(db, ws, e, a);
  if (!a && !unattributed && visitor?.first_link_id) {
    a = await attributionOf(db, ws, visitor.first_link_id, visitor.first_click_id!);
    unattributed = a ? await clickRefusal(db, ws, a, s, false, old.id) : null;
    if (unattributed) a = null;
  }
  const conversion = value !== null && a !== null;
  await db.query(
    `update recorded_events set name = $3, value = $4, claimed_value = $5, currency = $6, source = 'api', click_id = $7, link_id = $8, anchor_id = $9, signature_id = $10,
            campaign_id = $11, teammate_id = $12, email_id = $13, visitor_id = coalesce($14, visitor_id), anonymous_id = $15, user_id = coalesce($16, user_id),
            properties = properties || $17::jsonb, unattributed_reason = $18, conversion_emitted = conversion_emitted or $19, upgraded_at = now()
      where workspace_id = $1 and id = $2`,
    [ws, old.id, e.name, value, e.value, e.currency, e.clickId, a?.linkId ?? null, a?.anchorId ?? null, a?.signatureId ?? null, a?.campaignId ?? null, a?.teammateId ?? null,
      a?.emailId ?? null, visitor?.id ?? null, e.anonymousId, e.userId, e.properties, unattributed, conversion],
  );
  if (identified && visitor) await emitIdentified(db, ws, visitor, e.source, a);
  if (conversion && !old.conversion_emitted) await emitConversion(db, ws, { ...e, value }, a!, new Date());
  return { status: 'accepted', id: old.id, duplicate: false, outcome: 'upgraded' };
}

/**
 * Records one event in its own transaction, with its visitor and webhook events. A `click_id` that
 * is forged or of another workspace answers `unknown_click_id` and records nothing; with
 * `unknownClickId: 'unattributed'` (the browser endpoint) the event is recorded without it.
 */
export async function recordEvent(pool: pg.Pool, tokens: ClickTokens, workspaceId: string, input: EventInput, opts: { unknownClickId?: 'error' | 'unattributed' } = {}): Promise<RecordResult> {
  const keep = opts.unknownClickId === 'unattributed';
  const linkId = input.clickId === null ? null : tokens.verifyClickId(input.clickId);
  if (input.clickId !== null && linkId === null && !keep) return { status: 'unknown_click_id' };
  return withTx(pool, async (db) => {
    let attribution = linkId === null ? null : await attributionOf(db, workspaceId, linkId, input.clickId!);
    if (input.clickId !== null && !attribution && !keep) return { status: 'unknown_click_id' };
    const e = attribution || input.clickId === null ? input : { ...input, clickId: null };
    const s = await settingsOf(db, workspaceId);
    if (e.eventId !== null) {
      await lock(db, workspaceId, 'event', e.eventId);
      const { rows } = await db.query<ExistingEvent>(
        'select id, source, click_id, link_id::text, conversion_emitted, anonymous_id from recorded_events where workspace_id = $1 and event_id = $2',
        [workspaceId, e.eventId],
      );
      if (rows[0] && rows[0].source === 'browser' && e.source === 'api') return upgrade(db, workspaceId, tokens, rows[0], e, attribution, s);
      if (rows[0]) return { status: 'accepted', id: rows[0].id, duplicate: true, outcome: 'duplicate' };
    }
    const value = trustedValue(e, s);
    let unattributed = attribution ? await clickRefusal(db, workspaceId, attribution, s, value !== null, null) : null;
    if (unattributed) attribution = null;
    const { visitor, identified } = await touchVisitor(db, workspaceId, e, attribution);
    if (!attribution && !unattributed && visitor?.first_link_id) {
      attribution = await attributionOf(db, workspaceId, visitor.first_link_id, visitor.first_click_id!);
      unattributed = attribution ? await clickRefusal(db, workspaceId, attribution, s, false, null) : null;
      if (unattributed) attribution = null;
    }
    const conversion = value !== null && attribution !== null;
    const row = await insertEvent(db, workspaceId, e, attribution, visitor?.id ?? null, { value, unattributed, conversion });
    if (identified && visitor) await emitIdentified(db, workspaceId, visitor, e.source, attribution);
    if (conversion) await emitConversion(db, workspaceId, { ...e, value }, attribution!, row.recorded_at);
    return { status: 'accepted', id: row.id, duplicate: false, outcome: 'recorded' };
  });
}

async function emitIdentified(db: Queryable, ws: string, v: VisitorRow, source: string, a: Attribution | null): Promise<void> {
  const first = v.first_link_id && v.first_link_id !== a?.linkId ? await attributionOf(db, ws, v.first_link_id, v.first_click_id!) : a;
  await emitEvent(db, ws, 'visitor.identified', {
    visitor: { id: v.id, user_id: v.user_id, anonymous_id: v.anonymous_id, identified_via: source, first_seen_at: v.first_seen_at.toISOString(), traits: v.traits },
    attribution: { click_id: first?.clickId ?? '', teammate_uuid: first?.teammateId ?? '', signature_template_uuid: first?.signatureId ?? '', email_uuid: first?.emailId ?? '' },
  });
}

async function emitConversion(db: Queryable, ws: string, e: EventInput, a: Attribution, at: Date): Promise<void> {
  await emitEvent(
    db,
    ws,
    'conversion.recorded',
    {
      event_id: e.eventId,
      name: e.name,
      value: e.value,
      currency: e.currency,
      source: e.source,
      visitor: { anonymous_id: e.anonymousId, user_id: e.userId },
      attribution: { teammate_uuid: a.teammateId, signature_template_uuid: a.signatureId, anchor_uuid: a.anchorId, email_uuid: a.emailId, marketing_campaign_uuid: a.campaignId ?? '' },
      properties: e.properties,
    },
    at,
  );
}

/** Retention: removes recorded events older than `days` (their rollups and the visitors stay). */
export async function pruneEvents(db: Queryable, days: number): Promise<number> {
  const { rowCount } = await db.query(`delete from recorded_events where recorded_at < now() - make_interval(days => $1)`, [days]);
  return rowCount ?? 0;
}
