/**
 * What a click token leads to: the anchor link's destination and attribution, read once and kept in
 * a bounded in-process map for a minute (a destination never changes; the minute bounds how long a
 * workspace's switched-off tracking keeps being recorded).
 */
import type { Queryable } from '../db/tx.ts';

export interface ResolvedLink {
  linkId: string;
  workspaceId: string;
  anchorId: string;
  url: string;
  signatureId: string;
  campaignId: string | null;
  teammateId: string;
  emailId: string;
  /** The workspace's `event_tracking.enabled`: clicks are recorded only while it is on. */
  tracking: boolean;
}

const TTL_MS = 60_000;
const MAX_CACHED = 100_000;

export class LinkResolver {
  readonly #db: Queryable;
  readonly #cache = new Map<string, { at: number; link: ResolvedLink | null }>();

  constructor(db: Queryable) {
    this.#db = db;
  }

  async get(linkId: string): Promise<ResolvedLink | null> {
    const now = Date.now();
    const hit = this.#cache.get(linkId);
    if (hit && now - hit.at < TTL_MS) return hit.link;
    const { rows } = await this.#db.query<ResolvedLink>(
      `select l.id::text as "linkId", l.workspace_id as "workspaceId", l.anchor_id as "anchorId", a.url, l.signature_id as "signatureId",
              case when a.source_kind = 'campaign' then a.source_id end as "campaignId", l.teammate_id as "teammateId", l.email_id as "emailId",
              w.event_tracking_enabled as tracking
         from anchor_links l join anchors a on a.id = l.anchor_id join workspaces w on w.id = l.workspace_id
        where l.id = $1`,
      [linkId],
    );
    const link = rows[0] ?? null;
    if (this.#cache.size >= MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value!);
    this.#cache.set(linkId, { at: now, link });
    return link;
  }
}

/** The destination with `click_id` added to its query string (before any fragment). */
export function withClickId(url: string, clickId: string): string {
  const hash = url.indexOf('#');
  const base = hash < 0 ? url : url.slice(0, hash);
  const frag = hash < 0 ? '' : url.slice(hash);
  const sep = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${sep}click_id=${clickId}${frag}`;
}
