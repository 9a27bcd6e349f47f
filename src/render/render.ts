/**
 * renderSignature: a teammate's signature as email-safe HTML, its plain-text alternative, and the
 * sha256 of the HTML. Identical inputs give identical bytes: nothing depends on time, randomness or
 * the order of object keys in the values.
 *
 * Templates are compiled on first use and cached per tree object (and smart-field kinds object), so
 * rendering one template for many teammates compiles it once; trees are treated as immutable once
 * rendered. Callers holding a template for long may compile it themselves (`compileTemplate`) and
 * pass the compiled template as `tree` (or as the campaign's `content`).
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
}

/** Space between the signature and the banner, px. */
const BANNER_GAP = 16;

const cache = new WeakMap<object, { kinds: CompileOptions['smartFieldKinds']; compiled: CompiledTemplate }>();

/** The compiled form of a tree, compiled once per tree object and kinds object. */
export function compiledFor(tree: ContentTree | CompiledTemplate, kinds?: CompileOptions['smartFieldKinds']): CompiledTemplate {
  if (tree instanceof CompiledTemplate) return tree;
  const hit = cache.get(tree);
  if (hit && hit.kinds === kinds) return hit.compiled;
  const compiled = new CompiledTemplate(tree, kinds ? { smartFieldKinds: kinds } : {});
  cache.set(tree, { kinds, compiled });
  return compiled;
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
  const campaign = input.campaign;
  if (campaign?.content && campaignApplies(campaign, input.signatureId, input.values, input.variant)) {
    const b = compiledFor(campaign.content, input.smartFieldKinds).render(env);
    if (b.html) {
      banner = true;
      html = sig.html
        ? `${TABLE_OPEN}<tr><td>${sig.html}</td></tr><tr><td style="padding-top:${BANNER_GAP}px">${b.html}</td></tr></table>`
        : b.html;
      text = sig.text && b.text ? `${sig.text}\n\n${b.text}` : sig.text || b.text;
    }
  }
  return { html, text, hash: hashHtml(html), banner };
}
