/**
 * renderSignature: a teammate's signature as email-safe HTML, its plain-text alternative, and the
 * sha256 of the HTML. Identical inputs give identical bytes: nothing depends on time, randomness or
 * the order of object keys in the values.
 *
 * An installation's render is given a `RenderTracking`: the renderer asks it for the address of
 * every link and image it writes, and for what follows the signature, so that tracked links and the
 * view image are written as the HTML is, and hashed with it once (src/analytics/renderTracking.ts).
 *
 * A tree passed as it is gets compiled for this one render. Callers that render one template for
 * many teammates pass it compiled (`compileTemplate`), as the render-input loader does (load.ts: the
 * one cache of compiled templates, per published version).
 */
import crypto from 'node:crypto';
import { campaignApplies, type LiveCandidate, type VariantSettings } from '../campaigns/choice.ts';
import { CompiledTemplate, TABLE_OPEN, type AssetRef, type CompileOptions, type SmartFieldValues } from './compile.ts';
import type { ContentTree } from './schema.ts';

/** The live campaign a render is given: its banner as a content tree or compiled (campaigns/choice.ts). */
export type CampaignInput = LiveCandidate<ContentTree | CompiledTemplate> & { id?: string | undefined; name?: string | undefined };

export interface RenderInput {
  /** The signature's content tree (validated), or a template compiled from it. */
  tree: ContentTree | CompiledTemplate;
  /** The teammate's smart-field values by smart field id. */
  values: SmartFieldValues;
  /** Kinds of the workspace's smart fields; `image` fields render as images. */
  smartFieldKinds?: CompileOptions['smartFieldKinds'];
  /** Workspace assets by id, for image fields whose value is an asset id. */
  assets?: ReadonlyMap<string, AssetRef> | undefined;
  /** The live campaign, if any; its banner is appended when it applies (campaigns/choice.ts). */
  campaign?: CampaignInput | null | undefined;
  /** The signature (template) id, matched against the campaign's signature_template_ids. */
  signatureId: string;
  /** Set when rendering a reply or internal variant; absent for the primary signature. */
  variant?: VariantSettings | null | undefined;
  /** The workspace's opt-out link that `optOut` blocks show (src/analytics/privacy.ts); absent: they are left out. */
  optOutUrl?: string | undefined;
}

export interface RenderOutput {
  html: string;
  text: string;
  /** sha256 hex of `html` (UTF-8). */
  hash: string;
  /** Whether the campaign banner was appended. */
  banner: boolean;
  /** Where the banner's HTML starts in `html` (links from there on are the campaign's), -1 without one. */
  bannerAt: number;
}

/** Which content a link or image is in: the signature, or the campaign's banner. */
export type Anchor = 'signature' | 'campaign';

/** What a render asks of link tracking (module comment). Every answer must be the same for the same question within one render. */
export interface RenderTracking {
  /** The address written for a link to `url` (a finished URL, before attribute escaping): `url` itself, or its tracked link. */
  link(url: string, anchor: Anchor): string;
  /** The `src` written for an image, asked in document order: `src` itself, or the tracked image. */
  image(src: string, anchor: Anchor): string;
  /** HTML written after everything else (the 1×1 view image), or ''. `banner`: whether the campaign's banner was written. */
  end(banner: boolean): string;
}

/** Space between the signature and the banner, px. */
const BANNER_GAP = 16;

/** The compiled form of a tree: the tree itself when it is compiled already. */
function compiledFor(tree: ContentTree | CompiledTemplate, kinds?: CompileOptions['smartFieldKinds']): CompiledTemplate {
  return tree instanceof CompiledTemplate ? tree : new CompiledTemplate(tree, kinds ? { smartFieldKinds: kinds } : {});
}

export function hashHtml(html: string): string {
  return crypto.hash('sha256', html, 'hex');
}

/** The render's `link` and `image` for one part, with its anchor. */
function trackedEnv(input: RenderInput, tracking: RenderTracking | undefined, anchor: Anchor) {
  const own = { values: input.values, assets: input.assets, optOutUrl: input.optOutUrl };
  if (!tracking) return own;
  return { ...own, link: (url: string) => tracking.link(url, anchor), image: (src: string) => tracking.image(src, anchor) };
}

export function renderSignature(input: RenderInput, tracking?: RenderTracking): RenderOutput {
  const env = trackedEnv(input, tracking, 'signature');
  const sig = compiledFor(input.tree, input.smartFieldKinds).render(env);
  let html = sig.html;
  let text = sig.text;
  let banner = false;
  let bannerAt = -1;
  const campaign = input.campaign;
  if (campaign?.content && campaignApplies(campaign, input.signatureId, input.values, input.variant)) {
    const b = compiledFor(campaign.content, input.smartFieldKinds).render(tracking ? trackedEnv(input, tracking, 'campaign') : env);
    if (b.html) {
      banner = true;
      const before = sig.html ? `${TABLE_OPEN}<tr><td>${sig.html}</td></tr><tr><td style="padding-top:${BANNER_GAP}px">` : '';
      bannerAt = before.length;
      html = sig.html ? `${before}${b.html}</td></tr></table>` : b.html;
      text = sig.text && b.text ? `${sig.text}\n\n${b.text}` : sig.text || b.text;
    }
  }
  if (tracking) html += tracking.end(banner);
  return { html, text, hash: hashHtml(html), banner, bannerAt };
}
