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
 * - **Conversions.** An event with a `value` that is click-attributed is a conversion:
 *   `conversion.recorded` fires once, with the spec's payload ('' for unresolved attribution).
 */
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import { emitEvent } from '../events/outbox.ts';
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

export type RecordResult = { status: 'accepted'; id: string; duplicate: boolean } | { status: 'unknown_click_id' };

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
      `insert into visitors (workspace_id, user_id, anonymous_id, traits, first_click_id, first_link_id, first_seen_at, last_seen_at)
       values ($1, $2, $3, $4, $5, $6, now(), now())
       returning id, user_id, anonymous_id, traits, first_click_id, first_link_id::text, first_seen_at`,
      [ws, e.userId, anonymousFree ? e.anonymousId : null, e.traits, attribution.clickId, attribution.linkId],
    );
    return { visitor: created.rows[0]!, identified: e.userId !== null };
  }
  const updated = await db.query<VisitorRow>(
    `update visitors set user_id = coalesce(user_id, $2), anonymous_id = coalesce(anonymous_id, $3), traits = traits || $4::jsonb,
            first_click_id = coalesce(first_click_id, $5), first_link_id = coalesce(first_link_id, $6), last_seen_at = now(), updated_at = now()
      where id = $1
      returning id, user_id, anonymous_id, traits, first_click_id, first_link_id::text, first_seen_at`,
    [found.id, e.userId, e.anonymousId, e.traits, attribution?.clickId ?? null, attribution?.linkId ?? null],
  );
  return { visitor: updated.rows[0]!, identified: e.userId !== null && found.user_id === null };
}

async function insertEvent(db: Queryable, ws: string, e: EventInput, a: Attribution | null, visitorId: string | null): Promise<{ id: string; recorded_at: Date; country_code: string }> {
  const { rows } = await db.query<{ id: string; recorded_at: Date; country_code: string }>(
    `insert into recorded_events (workspace_id, event_id, name, value, currency, source, click_id, link_id, anchor_id, signature_id, campaign_id, teammate_id, email_id,
                                  country_code, visitor_id, anonymous_id, user_id, properties)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
             coalesce((select country_code from clicks where id = $7 and workspace_id = $1), $14, ''), $15, $16, $17, $18)
     returning id, recorded_at, country_code`,
    [ws, e.eventId, e.name, e.value, e.currency, e.source, e.clickId, a?.linkId ?? null, a?.anchorId ?? null, a?.signatureId ?? null, a?.campaignId ?? null,
      a?.teammateId ?? null, a?.emailId ?? null, e.countryCode ?? null, visitorId, e.anonymousId, e.userId, e.properties],
  );
  return rows[0]!;
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
    if (e.eventId !== null) {
      await lock(db, workspaceId, 'event', e.eventId);
      const { rows } = await db.query<{ id: string }>('select id from recorded_events where workspace_id = $1 and event_id = $2', [workspaceId, e.eventId]);
      if (rows[0]) return { status: 'accepted', id: rows[0].id, duplicate: true };
    }
    const { visitor, identified } = await touchVisitor(db, workspaceId, e, attribution);
    if (!attribution && visitor?.first_link_id) attribution = await attributionOf(db, workspaceId, visitor.first_link_id, visitor.first_click_id!);
    const row = await insertEvent(db, workspaceId, e, attribution, visitor?.id ?? null);
    if (identified && visitor) await emitIdentified(db, workspaceId, visitor, e.source, attribution);
    if (e.value !== null && attribution) await emitConversion(db, workspaceId, e, attribution, row.recorded_at);
    return { status: 'accepted', id: row.id, duplicate: false };
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
