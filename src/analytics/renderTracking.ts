/**
 * The tracking of one installation's render: what the renderer writes for each link and image
 * (src/render/render.ts `RenderTracking`) when the workspace tracks events.
 *
 * - Every http(s) link becomes `PUBLIC_BASE_URL/c/{token}` of its anchor link (links.ts): the
 *   signature's anchor, or the campaign's for links in its banner (with the experiment arm whose
 *   banner it is, `t.armId`, while an experiment runs). `mailto:` and `tel:` links stay.
 *   The plain text's `label (url)` shows the same tracked link. The workspace's opt-out link
 *   (`PUBLIC_BASE_URL/o/...`, docs/privacy.md) stays as it is: following it is never recorded.
 * - One image becomes `PUBLIC_BASE_URL/v/{token}` (viewImages.ts): the banner's first http(s) image,
 *   or else a 1×1 image written after the signature.
 *
 * The renderer is synchronous and the ids live in the database, so a render is answered from what
 * is known (the bounded maps of links.ts and viewImages.ts, and what this install fetched) and notes
 * what is not; `renderTracked` then creates those rows and renders again. An unchanged signature
 * installed again renders once and is hashed once; the first render of a link for an address
 * renders twice.
 */
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/tx.ts';
import { escapeAttr } from '../render/escape.ts';
import type { Anchor, RenderOutput, RenderTracking } from '../render/render.ts';
import { knownLinkId, linkKey, resolveLinks, type AnchorSource, type TrackTarget } from './links.ts';
import { clickTokens, viewTokens, type ClickTokens } from './token.ts';
import { knownViewImageId, pixelHtml, viewImageId } from './viewImages.ts';

const WEB = /^https?:\/\//i;

/** Ids fetched from the database for one install, by link key and by view image. */
interface Fetched {
  links: Map<string, string>;
  images: Map<string, string>;
}

interface Tokens {
  clicks: ClickTokens;
  views: ClickTokens;
}

/** One render's tracking: answers from known ids, and notes what is missing. */
class InstallTracking implements RenderTracking {
  readonly missingLinks = new Map<string, { source: AnchorSource; url: string }>();
  missingImage: { campaignId: string | null; armId: string | null; url: string } | undefined;
  private readonly written = new Map<string, string>();
  private imageTracked = false;
  private readonly t: TrackTarget;
  private readonly baseUrl: string;
  private readonly tokens: Tokens;
  private readonly fetched: Fetched;

  constructor(t: TrackTarget, baseUrl: string, tokens: Tokens, fetched: Fetched) {
    this.t = t;
    this.baseUrl = baseUrl;
    this.tokens = tokens;
    this.fetched = fetched;
  }

  get complete(): boolean {
    return this.missingLinks.size === 0 && this.missingImage === undefined;
  }

  link(url: string, anchor: Anchor): string {
    // The workspace's opt-out link (privacy.ts) is never tracked.
    if (!WEB.test(url) || url.startsWith(`${this.baseUrl}/o/`)) return url;
    const source: AnchorSource =
      anchor === 'campaign' && this.t.campaignId
        ? { kind: 'campaign', id: this.t.campaignId, armId: this.t.armId ?? null }
        : { kind: 'signature', id: this.t.signatureId };
    const key = linkKey(this.t, source, url);
    const done = this.written.get(key);
    if (done !== undefined) return done;
    const id = this.fetched.links.get(key) ?? knownLinkId(key);
    if (id === undefined) {
      this.missingLinks.set(key, { source, url });
      return url;
    }
    const tracked = `${this.baseUrl}/c/${this.tokens.clicks.sign(id)}`;
    this.written.set(key, tracked);
    return tracked;
  }

  image(src: string, anchor: Anchor): string {
    if (anchor !== 'campaign' || this.imageTracked || !this.t.campaignId || !WEB.test(src)) return src;
    this.imageTracked = true;
    return this.viewUrl(this.t.campaignId, this.t.armId ?? null, src) ?? src;
  }

  end(banner: boolean): string {
    if (this.imageTracked) return '';
    const src = banner ? this.viewUrl(this.t.campaignId, this.t.armId ?? null, '') : this.viewUrl(null, null, '');
    return src === undefined ? '' : pixelHtml(escapeAttr(src));
  }

  /** The tracked address of a view image ('' for the 1×1 image), or undefined until it is fetched. */
  private viewUrl(campaignId: string | null, armId: string | null, url: string): string | undefined {
    const id = this.fetched.images.get(`${campaignId ?? ''}|${armId ?? ''}|${url}`) ?? knownViewImageId({ ...this.t, campaignId, armId }, url);
    if (id === undefined) {
      this.missingImage = { campaignId, armId, url };
      return undefined;
    }
    return `${this.baseUrl}/v/${this.tokens.views.sign(id)}`;
  }

  /**
   * Measuring, not installing (`create: false`): what this render missed gets the id 0, whose
   * token has the length of every token, so the HTML is as long as the installed one; no row is
   * created.
   */
  placeholdMissing(): void {
    if (this.missingImage) this.fetched.images.set(`${this.missingImage.campaignId ?? ''}|${this.missingImage.armId ?? ''}|${this.missingImage.url}`, '0');
    for (const key of this.missingLinks.keys()) this.fetched.links.set(key, '0');
  }

  /** Creates (or reads) what this render missed: the view image first, then the links. */
  async fetchMissing(db: Queryable): Promise<void> {
    if (this.missingImage) {
      const { campaignId, armId, url } = this.missingImage;
      this.fetched.images.set(`${campaignId ?? ''}|${armId ?? ''}|${url}`, await viewImageId(db, { ...this.t, campaignId, armId }, url));
    }
    if (this.missingLinks.size) {
      for (const [key, id] of await resolveLinks(db, this.t, [...this.missingLinks.values()])) this.fetched.links.set(key, id);
    }
  }
}

/**
 * Renders an installation with its links and view image tracked for `t` (`t.campaignId`: the live
 * campaign of the render, whose banner links and image are the campaign's). `render` is called
 * with the tracking to pass to renderSignature, once, or twice when the database had to be asked.
 * `create: false` (the compatibility report's measure) asks nothing and creates nothing.
 */
export async function renderTracked(
  ctx: Pick<AppContext, 'pool' | 'secrets' | 'config'>,
  t: TrackTarget,
  render: (tracking: RenderTracking) => RenderOutput,
  opts: { create?: boolean } = {},
): Promise<RenderOutput> {
  const tokens = { clicks: clickTokens(ctx.secrets), views: viewTokens(ctx.secrets) };
  const fetched: Fetched = { links: new Map(), images: new Map() };
  const first = new InstallTracking(t, ctx.config.PUBLIC_BASE_URL, tokens, fetched);
  const out = render(first);
  if (first.complete) return out;
  if (opts.create === false) first.placeholdMissing();
  else await first.fetchMissing(ctx.pool);
  const again = new InstallTracking(t, ctx.config.PUBLIC_BASE_URL, tokens, fetched);
  const second = render(again);
  if (!again.complete) throw new Error('a tracked link or image was still missing after it was created');
  return second;
}
