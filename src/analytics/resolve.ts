/**
 * What a click token leads to: the anchor link's destination and attribution, read at most once a
 * minute (recent.ts): a destination never changes, and the minute bounds how long a workspace's
 * switched-off tracking keeps being recorded.
 */
import type { Queryable } from '../db/tx.ts';
import { trackingState, type TrackingMode, type TrackingState } from '../db/workspaces.ts';
import { recentRows, type RecentRows } from './recent.ts';

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
  /** The workspace's `clicks_tracking` (docs/privacy.md). */
  mode: TrackingMode;
}

/**
 * A row read with its workspace's tracking state (src/db/workspaces.ts), read right after it: the
 * pair is kept together, so a row read after a change of the settings sees the change.
 */
export async function withTracking<T extends { workspaceId: string }>(db: Queryable, row: T | undefined): Promise<(T & { state: TrackingState }) | null> {
  const state = row && (await trackingState(db, row.workspaceId));
  return row && state ? { ...row, state } : null;
}

/** What a link id leads to, read at most once a minute (recent.ts). */
export function linkResolver(db: Queryable): RecentRows<ResolvedLink> {
  return recentRows(
    async (linkId) => {
      const link = await withTracking(
        db,
        (
          await db.query<Omit<ResolvedLink, 'tracking' | 'mode'>>(
            `select l.id::text as "linkId", l.workspace_id as "workspaceId", l.anchor_id as "anchorId", a.url, l.signature_id as "signatureId",
                  case when a.source_kind = 'campaign' then a.source_id end as "campaignId", l.teammate_id as "teammateId", l.email_id as "emailId"
             from anchor_links l join anchors a on a.id = l.anchor_id
            where l.id = $1`,
            [linkId],
          )
        ).rows[0],
      );
      if (!link) return null;
      const { state, ...rest } = link;
      return { ...rest, tracking: state.tracking, mode: state.clicks };
    },
    { ttlMs: 60_000, max: 100_000 },
  );
}

/** The destination with `click_id` added to its query string (before any fragment). */
export function withClickId(url: string, clickId: string): string {
  const hash = url.indexOf('#');
  const base = hash < 0 ? url : url.slice(0, hash);
  const frag = hash < 0 ? '' : url.slice(hash);
  const sep = !base.includes('?') ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${sep}click_id=${clickId}${frag}`;
}
