/**
 * Tracking that is lawful by default (docs/privacy.md): owner of `analytics_opt_outs`, and the one
 * place that decides what is kept per person. The rows themselves are written by their owners
 * (views.ts, clicks.ts, events.ts, the outbox); this module calls them.
 *
 * - **Modes.** Per workspace, views and clicks apart: `per_person` keeps the keyed hash of the
 *   client on each row; `aggregate` keeps it for the repeat window only (the sweep below removes it,
 *   after marking the repeats it decided), and the redirect hands out no click id, so no visitor is
 *   linked; `off` records nothing. Changing a setting applies to the rows already recorded at once
 *   (`changePrivacySettings` says what it did).
 * - **Opt-out.** A signature may carry an opt-out link (`/o/{token}`, the token an HMAC of the
 *   workspace id): the browser that confirms it (keyed hash of address and user agent) and its
 *   address (keyed hash of the address) are tracked as in `aggregate` from then on, and retroactively:
 *   their rows lose their keys and the visitors their clicks brought are erased.
 * - **Erasure and access.** One visitor with its events, the clicks it came by or sent, and the
 *   webhook events that name it: exported as one document, erased in one transaction.
 */
import crypto from 'node:crypto';
import type pg from 'pg';
import type { Secrets } from '../crypto/secrets.ts';
import { eraseVisitorEvents, visitorEvents } from '../db/outbox.ts';
import type { Queryable } from '../db/tx.ts';
import { updatePrivacySettings, type PrivacySettings, type TrackingMode } from '../db/workspaces.ts';
import { deleteClicks, dropClickerKey, dropClickerKeys } from './clicks.ts';
import type { EventInput } from './eventBodies.ts';
import { deleteVisitors, EVENTS_OF_VISITOR, visitorsOfClicks } from './events.ts';
import { REPEAT_WINDOW } from './rollups.ts';
import { dropViewerKey, dropViewerKeys } from './views.ts';

export const TRACKING_MODES = ['per_person', 'aggregate', 'off'] as const satisfies readonly TrackingMode[];

/** How long past the repeat window a key stays at most: the sweep runs every minute, rows arrive within seconds. */
const KEY_GRACE = '60 seconds';

/**
 * The sweep (every minute, before the rollups are rebuilt: src/tasks/analyticsRollup.ts): removes
 * the viewer and clicker keys that are past the repeat window where they are not kept per person.
 */
export async function sweepPersonalKeys(db: Pick<pg.Pool, 'query'>, workspaceId: string | null = null): Promise<{ views: number; clicks: number }> {
  const o = { workspaceId, window: REPEAT_WINDOW, olderThan: `${REPEAT_WINDOW} ${KEY_GRACE}` };
  return { views: await dropViewerKeys(db, o), clicks: await dropClickerKeys(db, o) };
}

/** What a change of mode does to the rows already recorded, in words (the API and the CLI print it). */
function effectOf(what: 'views' | 'clicks', from: TrackingMode, to: TrackingMode, dropped: number): string | null {
  if (from === to) return null;
  if (to === 'per_person') return `${what}: recorded per person from now on; rows recorded before keep no key (nothing is restored)`;
  const next = to === 'off' ? 'nothing more is recorded' : 'counts only from now on';
  return `${what}: ${next}; the per-person key was removed from ${dropped} rows already recorded (their counts stay)`;
}

/**
 * Changes the workspace's privacy settings and applies them, in the caller's transaction: a mode
 * that is no longer `per_person` removes every key of the rows recorded so far. Answers the settings
 * and what happened to the rows already recorded; undefined for an unknown workspace.
 */
export async function changePrivacySettings(
  db: Queryable,
  workspaceId: string,
  patch: Partial<PrivacySettings>,
): Promise<{ settings: PrivacySettings; effects: string[] } | undefined> {
  const changed = await updatePrivacySettings(db, workspaceId, patch);
  if (!changed) return undefined;
  const { before, after } = changed;
  const now = { workspaceId, window: REPEAT_WINDOW, olderThan: '0' };
  const views = after.views_tracking !== 'per_person' && before.views_tracking === 'per_person' ? await dropViewerKeys(db, now) : 0;
  const clicks = after.clicks_tracking !== 'per_person' && before.clicks_tracking === 'per_person' ? await dropClickerKeys(db, now) : 0;
  const effects = [
    effectOf('views', before.views_tracking, after.views_tracking, views),
    effectOf('clicks', before.clicks_tracking, after.clicks_tracking, clicks),
  ];
  if (before.retention_days !== after.retention_days)
    effects.push(`retention: raw rows and visitors older than ${after.retention_days ?? 'the deployment default of'} days are removed overnight`);
  return { settings: after, effects: effects.filter((e): e is string => e !== null) };
}

/** The opt-out link's token: the workspace id and an HMAC of it (a key of its own), base64url. */
export class OptOutTokens {
  readonly #key: Buffer;
  constructor(secrets: Secrets) {
    this.#key = secrets.deriveKey('opt-out-link');
  }

  #mac(id: Buffer): Buffer {
    return crypto.createHmac('sha256', this.#key).update(id).digest().subarray(0, 12);
  }

  sign(workspaceId: string): string {
    const id = Buffer.from(workspaceId.replace(/-/g, ''), 'hex');
    return Buffer.concat([id, this.#mac(id)]).toString('base64url');
  }

  /** The workspace's opt-out link: `PUBLIC_BASE_URL/o/{token}` (the API answers it; signatures' `optOut` blocks show it). */
  url(publicBaseUrl: string, workspaceId: string): string {
    return `${publicBaseUrl.replace(/\/+$/, '')}/o/${this.sign(workspaceId)}`;
  }

  /** The workspace a genuine token names; null for anything else. */
  verify(token: string): string | null {
    if (!/^[A-Za-z0-9_-]{38}$/.test(token)) return null;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length !== 28) return null;
    const id = raw.subarray(0, 16);
    if (!crypto.timingSafeEqual(raw.subarray(16), this.#mac(id))) return null;
    const hex = id.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

export interface OptOutResult {
  views: number;
  clicks: number;
  visitors: number;
}

/**
 * A recipient's opt-out (the public route, after the person confirmed): records the browser and
 * its address, removes their keys from every row recorded so far and erases the visitors their
 * clicks brought, in one transaction.
 */
export async function optOut(db: Queryable, workspaceId: string, browser: string, address: string): Promise<OptOutResult> {
  await db.query(`insert into analytics_opt_outs (workspace_id, kind, key) values ($1, 'browser', $2), ($1, 'address', $3) on conflict do nothing`, [
    workspaceId,
    browser,
    address,
  ]);
  const views = await dropViewerKey(db, workspaceId, browser);
  const clickIds = await dropClickerKey(db, workspaceId, browser, address);
  const visitors = await eraseVisitors(db, workspaceId, await visitorsOfClicks(db, workspaceId, clickIds), { keepClicks: true });
  return { views, clicks: clickIds.length, visitors };
}

/** Whether this browser or its address opted out in the workspace (the redirect hands out no click id then). */
export async function optedOut(db: Queryable, workspaceId: string, browser: string, address: string): Promise<boolean> {
  const { rows } = await db.query(
    `select 1 from analytics_opt_outs where workspace_id = $1 and ((kind = 'browser' and key = $2) or (kind = 'address' and key = $3)) limit 1`,
    [workspaceId, browser, address],
  );
  return rows.length > 0;
}

/**
 * Erases visitors with everything tied to them: their events, the clicks they came by or sent
 * (unless `keepClicks`: an opt-out keeps them as anonymous counts) and the webhook events that name
 * them. Returns how many visitors were erased.
 */
export async function eraseVisitors(db: Queryable, workspaceId: string, visitorIds: string[], o: { keepClicks?: boolean } = {}): Promise<number> {
  const { clickIds, visitors } = await deleteVisitors(db, workspaceId, visitorIds);
  if (!o.keepClicks) await deleteClicks(db, workspaceId, clickIds);
  for (const v of visitors) await eraseVisitorEvents(db, workspaceId, v);
  return visitors.length;
}

/** Everything kept about one visitor (an access request), or null when the workspace has no such visitor. */
export async function visitorExport(db: Queryable, workspaceId: string, visitorId: string): Promise<Record<string, unknown> | null> {
  const v = await db.query<Record<string, unknown> & { first_click_id: string | null }>(
    `select id, user_id, anonymous_id, traits, first_click_id, first_link_id::text, first_seen_at, last_seen_at, created_at, updated_at
       from visitors where workspace_id = $1 and id = $2`,
    [workspaceId, visitorId],
  );
  const visitor = v.rows[0];
  if (!visitor) return null;
  const events = await db.query<Record<string, unknown> & { click_id: string | null }>(
    `select e.id, e.event_id, e.recorded_at, e.name, e.value, e.claimed_value, e.currency, e.source, e.click_id, e.signature_id, e.teammate_id, e.country_code,
            e.anonymous_id, e.user_id, e.properties ${EVENTS_OF_VISITOR} order by e.recorded_at, e.id`,
    [workspaceId, visitorId],
  );
  const clickIds = [...new Set([visitor.first_click_id, ...events.rows.map((e) => e.click_id)].filter((c): c is string => c !== null))];
  const clicks = await db.query(
    `select id, clicked_at, signature_id, teammate_id, country_code, is_bot, bot_reason from clicks where workspace_id = $1 and id = any($2::text[]) order by clicked_at`,
    [workspaceId, clickIds],
  );
  const webhookEvents = await visitorEvents(db, workspaceId, {
    id: visitorId,
    user_id: (visitor.user_id as string | null) ?? null,
    anonymous_id: (visitor.anonymous_id as string | null) ?? null,
  });
  return { visitor, events: events.rows, clicks: clicks.rows, webhook_events: webhookEvents };
}

/** Whether a browser's request asks not to be tracked: Global Privacy Control (`Sec-GPC: 1`) or `DNT: 1`. */
export function refusesTracking(headers: Record<string, string | string[] | undefined>): boolean {
  return headers['sec-gpc'] === '1' || headers.dnt === '1';
}

/**
 * An event of a browser that refuses tracking, with no identifier left: no anonymous or user id,
 * no traits, no click id (which would tie the visit to a click). It still counts as an event.
 */
export function withoutIdentifiers(e: EventInput): EventInput {
  return { ...e, anonymousId: null, userId: null, traits: {}, clickId: null };
}
