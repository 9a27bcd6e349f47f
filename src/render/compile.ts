/**
 * Compiles a content tree once into a small program, then renders it for any number of teammates.
 *
 * Everything that does not depend on a teammate is decided at compile time: hidden blocks are
 * removed, styles become CSS strings, static links are encoded, and lines without smart fields
 * become finished HTML. Rendering one teammate then only looks up the smart-field values the
 * template uses (each cleaned once), escapes them, builds the dynamic links, and concatenates.
 *
 * The HTML is email-safe: nested `<table role="presentation">` with inline styles, no `<style>`,
 * `<script>`, classes or external CSS. Elements used: table, tr, td, span, a, img, br.
 *
 * Layout
 * - A block renders into a `<td>`. Its padding, background and width are that cell's style. A block
 *   with margins gets an outer cell whose padding is the margin (margins sit outside the background).
 * - A stack renders a table inside its cell: one row per child (vertical) or one cell per child
 *   (horizontal, `valign` from `verticalAlign`, default top). `gap` inserts spacer rows or cells.
 * - A text block is a cell whose style is its first token's text style; tokens styled differently
 *   are spans holding only the difference, links are `<a>` with colour and decoration stated.
 * - A vertical list is a table with one row per item; a horizontal list is one cell with its items
 *   inline, joined by `separator`. A socialList is rows of linked square icons, as many to a row as
 *   fit in its width (blocks.ts SocialListNode).
 * - The whole is one outer table (outerTable below): at most 600 px wide, long words broken, with its
 *   own background. Values are spans with their direction (lines.ts ValueToken).
 * - A smart token whose smart field has kind `image` renders as `<img>`; its value is an http(s)
 *   URL or the id of a workspace asset. The image is as wide as the text block's `width` (80 px by
 *   default), and the token's literal `value` is the alt text. A token with `assetUuid` is an image
 *   of that workspace asset, sized the same way; the render's `assets` map gives its URL.
 *
 * Empty smart fields
 * - A text line or list item whose smart tokens all resolve empty is dropped entirely, label
 *   included. A token is smart when its value or its link comes from a smart field; a link that
 *   resolves empty empties its token.
 * - Literal tokens between two smart tokens are separators (" | ", ", "): such a run is shown only
 *   when some smart token before it was shown and the next smart token after it is shown. Literal
 *   text before the first smart token or after the last one (prefixes, suffixes) stays.
 * - A stack, list or socialList whose children are all dropped is dropped too, and gaps are only
 *   placed between children that are shown. A stack with no children by design (a divider) renders.
 *
 * Links
 * - `href.text` (validated: https, http, mailto, tel) is the URL or, with `smartFieldUuid`, its
 *   prefix. A URL from a smart field alone gets a scheme from the field kind when it has none
 *   (email → mailto:, phone → tel:, otherwise https:// for a host name); anything that still is not
 *   https, http, mailto or tel renders as plain text, without a link.
 * - Query parameters are appended before any `#fragment`, keys and values encoded with
 *   encodeURIComponent. A parameter whose value resolves empty is left out.
 * - In the plain text, a link is written `label (url)`, or just the label when the label already is
 *   the address (`jane@acme.com` for `mailto:jane@acme.com`).
 * - A render may be given `link` and `image` (RenderEnvInput): every href, and the `label (url)` of
 *   the plain text, is written as `link(url)`, and every image's src as `image(src)`, asked in
 *   document order. An installation's tracked links and view image come this way
 *   (src/analytics/renderTracking.ts), so its HTML is written once, as installed.
 */
import { cleanValue } from '../text.ts';
import type { ContentTree } from './schema.ts';
import { type CompileOptions, type Env, type RenderEnvInput, SIGNATURE_MAX_WIDTH, Slots, TABLE_CLOSE } from './program.ts';
import { resolveBox } from './style.ts';
import { type CBlock, compileBlock } from './blocks.ts';

export { TABLE_OPEN, type AssetRef, type CompileOptions, type RenderEnvInput, type SmartFieldKind, type SmartFieldValues } from './program.ts';

/** The widest width any block of the tree sets (0 when none does). */
function widestBlock(node: unknown, depth = 0): number {
  if (typeof node !== 'object' || node === null || depth > 64) return 0;
  const n = node as { blockStyle?: Parameters<typeof resolveBox>[0]; children?: unknown[] };
  const own = n.blockStyle?.width !== undefined ? (resolveBox(n.blockStyle).width ?? 0) : 0;
  return Math.max(own, ...(Array.isArray(n.children) ? n.children.map((c) => widestBlock(c, depth + 1)) : []));
}

/**
 * The signature's outer table (Layout, Width and Dark mode in docs/rendering.md): at most
 * SIGNATURE_MAX_WIDTH wide (or its widest block), words longer than a line broken where they meet
 * its edge, and a white background where the tree's root sets none, so that a mail client that
 * darkens the page around a message but keeps its colours still shows the text on the colour it was
 * designed on.
 */
function outerTable(tree: ContentTree): string {
  const max = Math.round(Math.max(SIGNATURE_MAX_WIDTH, widestBlock(tree)));
  const own = tree?.blockStyle?.backgroundColor !== undefined && resolveBox(tree.blockStyle).background !== undefined;
  const bg = own ? '' : ';background-color:#ffffff';
  return `<table role="presentation" cellpadding="0" cellspacing="0"${own ? '' : ' bgcolor="#ffffff"'} style="max-width:${max}px;word-break:break-word${bg}">`;
}

export interface RenderedParts {
  html: string;
  text: string;
}

export class CompiledTemplate {
  /** Ids of the smart fields the template reads. */
  readonly smartFieldIds: readonly string[];
  /** Ids of the assets the template shows; the render's `assets` map must hold their URLs. */
  readonly assetIds: readonly string[];
  private readonly root: CBlock | null;
  private readonly urlCount: number;
  private readonly open: string;

  constructor(tree: ContentTree, opts: CompileOptions = {}) {
    const slots = new Slots(opts.smartFieldKinds);
    this.root = tree && tree.type === 'stack' ? compileBlock(tree, {}, slots) : null;
    this.smartFieldIds = slots.ids;
    this.assetIds = [...slots.assetIds];
    this.urlCount = slots.urlCount;
    this.open = this.root ? outerTable(tree) : '';
  }

  private env(input: RenderEnvInput): Env {
    const ids = this.smartFieldIds;
    const vals = new Array<string>(ids.length);
    const values = input.values;
    if (values instanceof Map) {
      for (let i = 0; i < ids.length; i++) vals[i] = cleanValue(values.get(ids[i]!));
    } else {
      const rec = values as Readonly<Record<string, string | null | undefined>>;
      for (let i = 0; i < ids.length; i++) vals[i] = cleanValue(Object.hasOwn(rec, ids[i]!) ? rec[ids[i]!] : undefined);
    }
    return {
      vals,
      esc: new Array(ids.length),
      urls: new Array(this.urlCount),
      assets: input.assets,
      link: input.link,
      image: input.image,
      optOutUrl: input.optOutUrl,
      text: '',
      lines: [],
    };
  }

  /** The HTML (a single table, or '' when every block is dropped) and the plain-text alternative. */
  render(input: RenderEnvInput): RenderedParts {
    if (!this.root) return { html: '', text: '' };
    const env = this.env(input);
    const cell = this.root.slot(env);
    return { html: cell ? `${this.open}<tr>${cell}</tr>${TABLE_CLOSE}` : '', text: env.lines.join('\n') };
  }
}

/** Compiles a validated tree; reuse the result for every teammate of the template. */
export function compileTemplate(tree: ContentTree, opts: CompileOptions = {}): CompiledTemplate {
  return new CompiledTemplate(tree, opts);
}
