/**
 * Tracked images: owner of `view_images`.
 *
 * When a signature is rendered for an installation in a workspace with event tracking on, exactly
 * one image of it is served through the service, so that its fetches count as views (the renderer
 * writes it so: renderTracking.ts):
 *
 * - with a campaign banner that shows an http(s) image, the banner's first image: its `src` becomes
 *   `PUBLIC_BASE_URL/v/{token}`, and the service answers with the image (src/api/views.ts);
 * - otherwise a 1×1 transparent image is appended after the signature (`width`/`height` attributes
 *   1, `alt=""`, `display:block`, no border): it adds one pixel of height and nothing else.
 *
 * Other images (logos, photos, social icons, further banner images) stay as they are: one message
 * shown is one fetch of one tracked image, not one per image. The token names a `view_images` row
 * (the image as installed for one address under one signature, with the campaign whose banner was
 * shown, and the experiment arm whose banner it was), created on first use and never changed, so the same input gives the same HTML and hash
 * and a republish without a change writes nothing to mailboxes. Known rows are kept in a bounded
 * in-process map, as tracked links are (links.ts).
 */
import type { Queryable } from '../db/tx.ts';
import type { TrackingMode } from '../db/workspaces.ts';
import { recentRows } from './recent.ts';
import { withTracking } from './resolve.ts';

export interface ViewTarget {
  workspaceId: string;
  signatureId: string;
  /** The campaign whose banner the render shows (the banner image's, or the 1×1 image's when the banner has no image), if any. */
  campaignId: string | null;
  /** The experiment arm whose banner the render shows (with its campaign), if any: each view joins to it through its image. */
  armId?: string | null | undefined;
  teammateId: string;
  emailId: string;
}

const MAX_CACHED = 100_000;
const known = new Map<string, string>();

/**
 * The 1×1 image appended to signatures without a banner image; `src` is its tracked URL,
 * attribute-escaped. Sized by its attributes alone, like every image the renderer writes: CSS
 * `height` becomes `min-height` in Yahoo, and Outlook for Windows takes `margin` and `padding` on
 * images only partly (src/render/compatibility.ts checks the installed HTML for such findings).
 */
export function pixelHtml(src: string): string {
  return `<img src="${src}" width="1" height="1" alt="" style="display:block;border:0">`;
}

const keyOf = (t: ViewTarget, url: string) => `${t.signatureId}|${t.emailId}|${t.campaignId ?? ''}|${t.armId ?? ''}|${url}`;

/** The id of the tracked image of (signature, address, campaign, url) when the map of known images holds it. */
export function knownViewImageId(t: ViewTarget, url: string): string | undefined {
  return known.get(keyOf(t, url));
}

/** The id of the tracked image of (signature, address, campaign, url), created when missing. */
export async function viewImageId(db: Queryable, t: ViewTarget, url: string): Promise<string> {
  const key = keyOf(t, url);
  const hit = known.get(key);
  if (hit) return hit;
  await db.query(
    `insert into view_images (workspace_id, signature_id, campaign_id, arm_id, teammate_id, email_id, url) values ($1, $2, $3, $4, $5, $6, $7) on conflict do nothing`,
    [t.workspaceId, t.signatureId, t.campaignId, t.armId ?? null, t.teammateId, t.emailId, url],
  );
  const { rows } = await db.query<{ id: string }>(
    `select id::text from view_images where workspace_id = $1 and signature_id = $2 and campaign_id is not distinct from $3::uuid and arm_id is not distinct from $6::uuid
        and email_id = $4 and url_hash = md5($5) and url = $5`,
    [t.workspaceId, t.signatureId, t.campaignId, t.emailId, url, t.armId ?? null],
  );
  if (!rows[0]) throw new Error(`no tracked image for ${url || 'the 1×1 image'}`);
  if (known.size >= MAX_CACHED) known.delete(known.keys().next().value!);
  known.set(key, rows[0].id);
  return rows[0].id;
}

export interface ResolvedImage {
  imageId: string;
  workspaceId: string;
  signatureId: string;
  campaignId: string | null;
  teammateId: string;
  emailId: string;
  /** The banner image's address; '' for the 1×1 image. */
  url: string;
  /** The workspace's `event_tracking.enabled`: views are recorded only while it is on. */
  tracking: boolean;
  /** The workspace's `views_tracking` (docs/privacy.md). */
  mode: TrackingMode;
}

/** What a view token leads to, read at most once a minute (recent.ts), as for links. */
export function imageResolver(db: Queryable): (imageId: string) => Promise<ResolvedImage | null> {
  return recentRows(
    async (imageId) => {
      const image = await withTracking(
        db,
        (
          await db.query<Omit<ResolvedImage, 'tracking' | 'mode'>>(
            `select i.id::text as "imageId", i.workspace_id as "workspaceId", i.signature_id as "signatureId", i.campaign_id as "campaignId",
                  i.teammate_id as "teammateId", i.email_id as "emailId", i.url
             from view_images i where i.id = $1`,
            [imageId],
          )
        ).rows[0],
      );
      if (!image) return null;
      const { state, ...rest } = image;
      return { ...rest, tracking: state.tracking, mode: state.views };
    },
    { ttlMs: 60_000, max: MAX_CACHED },
  );
}
