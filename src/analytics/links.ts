/**
 * Tracked links: owner of `anchors` and `anchor_links`.
 *
 * When a signature is rendered for an installation in a workspace with event tracking on, every
 * http(s) link the renderer writes (text tokens, social icons, image links, the campaign banner)
 * is written as `PUBLIC_BASE_URL/c/{token}` (renderTracking.ts); `mailto:` and `tel:` links stay as
 * they are. An anchor is one distinct destination of one signature template, or of one campaign for
 * links in its banner; an anchor link is that anchor installed for one address under one signature,
 * and the token names it (token.ts). Both are created on first use and never change, so the same
 * input gives the same HTML and hash: a republish without a change still writes nothing to mailboxes.
 *
 * Known links are kept in a bounded in-process map, so a fan-out that renders an unchanged
 * signature for thousands of mailboxes reads nothing here; new ones cost two statements per render.
 */
import type { Queryable } from '../db/tx.ts';
import { trackingState } from '../db/workspaces.ts';

export interface TrackTarget {
  workspaceId: string;
  signatureId: string;
  /** The campaign whose banner the render shows (its links are the campaign's anchors), if any. */
  campaignId: string | null;
  /** The experiment arm whose banner the render shows (its links are the arm's anchors of the campaign), if any. */
  armId?: string | null | undefined;
  teammateId: string;
  emailId: string;
}

/** What an anchor belongs to: the signature template, or the campaign for links in its banner (and the experiment arm whose banner it is). */
export interface AnchorSource {
  kind: 'signature' | 'campaign';
  id: string;
  armId?: string | null | undefined;
}
type Source = AnchorSource;

const MAX_CACHED = 100_000;
const known = new Map<string, string>();

/** The key of a link in the map of known links (and in what resolveLinks answers). */
export const linkKey = (t: TrackTarget, s: Source, url: string) => `${t.signatureId}|${t.emailId}|${s.id}|${s.armId ?? ''}|${url}`;
const keyOf = linkKey;

/** The link id of a key when the map of known links holds it. */
export function knownLinkId(key: string): string | undefined {
  return known.get(key);
}

function remember(key: string, linkId: string): void {
  if (known.size >= MAX_CACHED) known.delete(known.keys().next().value!);
  known.set(key, linkId);
}

/** Anchor ids for the given sources and destinations, created when missing. */
async function anchorIds(db: Queryable, workspaceId: string, wanted: { source: Source; url: string }[]): Promise<Map<string, string>> {
  const params = [
    workspaceId,
    wanted.map((w) => w.source.kind),
    wanted.map((w) => w.source.id),
    wanted.map((w) => w.url),
    wanted.map((w) => w.source.armId ?? null),
  ];
  await db.query(
    `insert into anchors (workspace_id, source_kind, source_id, url, arm_id)
     select $1::uuid, k, s, u, arm from unnest($2::text[], $3::uuid[], $4::text[], $5::uuid[]) as i(k, s, u, arm)
     on conflict on constraint anchors_source_arm_url do nothing`,
    params,
  );
  const { rows } = await db.query<{ id: string; source_id: string; arm_id: string | null; url: string }>(
    `select a.id, a.source_id, a.arm_id, a.url
       from anchors a join unnest($2::uuid[], $3::text[], $4::uuid[]) as i(s, u, arm) on a.source_id = i.s and a.url_hash = md5(i.u) and a.url = i.u and a.arm_id is not distinct from i.arm
      where a.workspace_id = $1`,
    [workspaceId, params[2], params[3], params[4]],
  );
  return new Map(rows.map((r) => [`${r.source_id}|${r.arm_id ?? ''}|${r.url}`, r.id]));
}

/** Link ids of the given anchors for the target's address and signature, created when missing. */
async function linkIds(db: Queryable, t: TrackTarget, anchors: string[]): Promise<Map<string, string>> {
  const params = [t.workspaceId, anchors, t.signatureId, t.teammateId, t.emailId];
  await db.query(
    `insert into anchor_links (workspace_id, anchor_id, signature_id, teammate_id, email_id)
     select $1::uuid, a, $3::uuid, $4::uuid, $5::uuid from unnest($2::uuid[]) as a
     on conflict (anchor_id, signature_id, email_id) do nothing`,
    params,
  );
  const { rows } = await db.query<{ id: string; anchor_id: string }>(
    `select id::text, anchor_id from anchor_links where workspace_id = $1 and anchor_id = any($2::uuid[]) and signature_id = $3 and email_id = $4`,
    [t.workspaceId, anchors, t.signatureId, t.emailId],
  );
  return new Map(rows.map((r) => [r.anchor_id, r.id]));
}

/** The link id of every (source, url), by linkKey, from the map of known links or the database (created when missing). */
export async function resolveLinks(db: Queryable, t: TrackTarget, found: { source: Source; url: string }[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const missing: { source: Source; url: string }[] = [];
  for (const f of found) {
    const id = known.get(keyOf(t, f.source, f.url));
    if (id) out.set(keyOf(t, f.source, f.url), id);
    else missing.push(f);
  }
  if (!missing.length) return out;
  const anchors = await anchorIds(db, t.workspaceId, missing);
  const links = await linkIds(db, t, [...new Set(anchors.values())]);
  for (const m of missing) {
    const anchor = anchors.get(`${m.source.id}|${m.source.armId ?? ''}|${m.url}`);
    const link = anchor && links.get(anchor);
    if (!link) throw new Error(`no tracked link for ${m.url}`);
    const key = keyOf(t, m.source, m.url);
    remember(key, link);
    out.set(key, link);
  }
  return out;
}

/** Whether the workspace's links are tracked (`event_tracking.enabled`). */
export async function trackingEnabled(db: Queryable, workspaceId: string): Promise<boolean> {
  return (await trackingState(db, workspaceId))?.tracking === true;
}
