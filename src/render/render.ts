/**
 * renderSignature: a teammate's signature as email-safe HTML, its plain-text alternative, and the
 * sha256 of the HTML. Identical inputs give identical bytes: nothing depends on time, randomness or
 * the order of object keys in the values.
 *
 * A tree passed as it is gets compiled for this one render. Callers that render one template for
 * many teammates pass it compiled (`compileTemplate`), as the render-input loader does (load.ts: the
 * one cache of compiled templates, per published version).
 */
import crypto from 'node:crypto';
import { campaignApplies, type CampaignInput, type VariantSettings } from './campaign.ts';
import { CompiledTemplate, TABLE_OPEN, type AssetRef, type CompileOptions, type SmartFieldValues } from './compile.ts';
import type { ContentTree } from './schema.ts';

export interface RenderInput {
  /** The signature's content tree (validated), or a template compiled from it. */
  tree: ContentTree | CompiledTemplate;
  /** The teammate's smart-field values by smart field id. */
  values: SmartFieldValues;
  /** Kinds of the workspace's smart fields; `image` fields render as images. */
  smartFieldKinds?: CompileOptions['smartFieldKinds'];
  /** Workspace assets by id, for image fields whose value is an asset id. */
  assets?: ReadonlyMap<string, AssetRef> | undefined;
  /** The live campaign, if any; its banner is appended when it applies (campaign.ts). */
  campaign?: CampaignInput | null | undefined;
  /** The signature (template) id, matched against the campaign's signature_template_ids. */
  signatureId: string;
  /** Set when rendering a reply or internal variant; absent for the primary signature. */
  variant?: VariantSettings | null | undefined;
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

/** Space between the signature and the banner, px. */
const BANNER_GAP = 16;

/** The compiled form of a tree: the tree itself when it is compiled already. */
function compiledFor(tree: ContentTree | CompiledTemplate, kinds?: CompileOptions['smartFieldKinds']): CompiledTemplate {
  return tree instanceof CompiledTemplate ? tree : new CompiledTemplate(tree, kinds ? { smartFieldKinds: kinds } : {});
}

export function hashHtml(html: string): string {
  return crypto.hash('sha256', html, 'hex');
}

export function renderSignature(input: RenderInput): RenderOutput {
  const env = { values: input.values, assets: input.assets };
  const sig = compiledFor(input.tree, input.smartFieldKinds).render(env);
  let html = sig.html;
  let text = sig.text;
  let banner = false;
  let bannerAt = -1;
  const campaign = input.campaign;
  if (campaign?.content && campaignApplies(campaign, input.signatureId, input.values, input.variant)) {
    const b = compiledFor(campaign.content, input.smartFieldKinds).render(env);
    if (b.html) {
      banner = true;
      const before = sig.html ? `${TABLE_OPEN}<tr><td>${sig.html}</td></tr><tr><td style="padding-top:${BANNER_GAP}px">` : '';
      bannerAt = before.length;
      html = sig.html ? `${before}${b.html}</td></tr></table>` : b.html;
      text = sig.text && b.text ? `${sig.text}\n\n${b.text}` : sig.text || b.text;
    }
  }
  return { html, text, hash: hashHtml(html), banner, bannerAt };
}
