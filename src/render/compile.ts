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
 *   inline, joined by `separator`. A socialList is one row of linked square icons.
 * - A smart token whose smart field has kind `image` renders as `<img>`; its value is an http(s)
 *   URL or the id of a workspace asset. The image is as wide as the text block's `width` (80 px by
 *   default), and the token's literal `value` is the alt text.
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
 */
import { allowedScheme, cleanLiteral, cleanValue, compactTel, encodeUrl, escapeAttr, escapeMultiline, escapeText, px, singleLine } from './escape.ts';
import { SOCIAL_ICONS, SOCIAL_NETWORK_NAMES, type SocialNetwork } from './social.ts';
import {
  DEFAULTS,
  type Block,
  type ContentTree,
  type Href,
  type ListBlock,
  type ListItemBlock,
  type SocialListBlock,
  type StackBlock,
  type TextBlock,
  type TextToken,
} from './schema.ts';
import { diffTextCss, fullTextCss, hasMargin, joinCss, linkTextCss, paddingCss, resolveBox, resolveTextStyle, type Box, type ResolvedTextStyle } from './style.ts';

export type SmartFieldKind = 'text' | 'email' | 'phone' | 'url' | 'image';

export interface CompileOptions {
  /** Kinds of the workspace's smart fields by id; a field not listed is `text`. */
  smartFieldKinds?: ReadonlyMap<string, SmartFieldKind> | Readonly<Record<string, SmartFieldKind>>;
}

/** A workspace asset an image field may name by id. */
export interface AssetRef {
  url: string;
}

export type SmartFieldValues = ReadonlyMap<string, string | null | undefined> | Readonly<Record<string, string | null | undefined>>;

export interface RenderEnvInput {
  values: SmartFieldValues;
  assets?: ReadonlyMap<string, AssetRef> | undefined;
}

/** Per-render state: the template's smart-field values, cleaned once, and lazily built pieces. */
interface Env {
  vals: string[];
  esc: (string | undefined)[];
  urls: (string | null | undefined)[];
  assets: ReadonlyMap<string, AssetRef> | undefined;
  /** Per-line scratch: HTML and text of the smart tokens (lines never nest, so one pair serves all). */
  scratchHtml: (string | null)[];
  scratchText: (string | null)[];
  /** The text of the line just rendered. */
  text: string;
  /** Plain-text lines, appended in document order by the blocks that are shown. */
  lines: string[];
}

/**
 * Every table: presentation role for screen readers; cellpadding and cellspacing 0 (they default to
 * 1 and 2). No `border` (absent means none) and no border-collapse (there are no borders to collapse).
 */
export const TABLE_OPEN = '<table role="presentation" cellpadding="0" cellspacing="0">';
const TABLE_CLOSE = '</table>';

/** Compile-time registry of smart fields and dynamic links used by one template. */
class Slots {
  readonly ids: string[] = [];
  readonly index = new Map<string, number>();
  urlCount = 0;
  readonly kinds: CompileOptions['smartFieldKinds'];

  constructor(kinds: CompileOptions['smartFieldKinds']) {
    this.kinds = kinds;
  }

  slot(id: string): number {
    let i = this.index.get(id);
    if (i === undefined) {
      i = this.ids.length;
      this.ids.push(id);
      this.index.set(id, i);
    }
    return i;
  }

  kind(id: string): SmartFieldKind {
    const k = this.kinds instanceof Map ? this.kinds.get(id) : (this.kinds as Record<string, SmartFieldKind> | undefined)?.[id];
    return k ?? 'text';
  }
}

// ---------------------------------------------------------------------------------------------
// Links

const LIKELY_HOST = /^[^\s:/?#@]+\.[^\s:/?#@]{2,}(?:[/?#].*)?$/;
const LIKELY_EMAIL = /^[^\s@:/]+@[^\s@:/]+$/;
const TEL_NOISE_G = /[\s().-]/g;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** Turns a resolved address into a safe, encoded URL, or null when it must not be linked. */
function finishUrl(raw: string, kind: SmartFieldKind | undefined): string | null {
  let s = singleLine(raw).trim();
  if (!s) return null;
  let scheme = allowedScheme(s);
  if (!scheme && kind !== undefined && !ANY_SCHEME.test(s)) {
    if (kind === 'email' || LIKELY_EMAIL.test(s)) s = `mailto:${s}`;
    else if (kind === 'phone') s = `tel:${s}`;
    else if (LIKELY_HOST.test(s)) s = `https://${s}`;
    scheme = allowedScheme(s);
  }
  if (!scheme) return null;
  if (scheme === 'tel') s = compactTel(s);
  return encodeUrl(s);
}

function withQuery(url: string, query: string): string {
  if (!query) return url;
  const hash = url.indexOf('#');
  const base = hash < 0 ? url : url.slice(0, hash);
  const frag = hash < 0 ? '' : url.slice(hash);
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return base + sep + query + frag;
}

interface QueryPart {
  literal: string;
  slot: number;
}

/** A compiled href: either fixed, or rebuilt per teammate. */
class CompiledHref {
  /** The finished URL (not yet attribute-escaped), or null for no link, when nothing is dynamic. */
  readonly fixed: string | null | undefined;
  /** Index into env.urls when dynamic. */
  private readonly urlSlot: number;
  private readonly prefix: string;
  private readonly valueSlot: number;
  private readonly valueKind: SmartFieldKind | undefined;
  /** The query string when no parameter is dynamic; otherwise the parameters in their order. */
  private readonly staticQuery: string;
  private readonly params: { key: string; parts: QueryPart[]; fixed: string | undefined }[];
  /** True when the link's address comes from a smart field: empty field, empty token. */
  readonly smart: boolean;

  constructor(h: Href, slots: Slots) {
    this.prefix = h.text === undefined ? '' : cleanLiteral(h.text);
    this.valueSlot = h.smartFieldUuid === undefined ? -1 : slots.slot(h.smartFieldUuid);
    this.valueKind = h.smartFieldUuid === undefined ? undefined : slots.kind(h.smartFieldUuid);
    this.smart = this.valueSlot >= 0;
    // Parameters keep the order the author gave them; fully literal ones are encoded here, once.
    this.params = (h.queryParams ?? []).map((q) => {
      const key = encodeURIComponent(singleLine(cleanLiteral(q.key)));
      const parts: QueryPart[] = q.values.map((v) => ({
        literal: v.text === undefined ? '' : singleLine(cleanLiteral(v.text)),
        slot: v.smartFieldUuid === undefined ? -1 : slots.slot(v.smartFieldUuid),
      }));
      const literal = parts.every((p) => p.slot < 0) ? parts.map((p) => p.literal).join('') : undefined;
      return { key, parts, fixed: literal === undefined ? undefined : literal ? `${key}=${encodeURIComponent(literal)}` : '' };
    });
    const dynamicQuery = this.params.some((p) => p.fixed === undefined);
    this.staticQuery = dynamicQuery ? '' : this.params.map((p) => p.fixed).filter(Boolean).join('&');
    if (!this.smart && !dynamicQuery) {
      const base = finishUrl(this.prefix, undefined);
      this.fixed = base === null ? null : withQuery(base, this.staticQuery);
      this.urlSlot = -1;
    } else {
      this.fixed = undefined;
      this.urlSlot = slots.urlCount++;
    }
  }

  /** The URL for this teammate (not attribute-escaped), null for no link. */
  url(env: Env): string | null {
    if (this.fixed !== undefined) return this.fixed;
    const cached = env.urls[this.urlSlot];
    if (cached !== undefined) return cached;
    let url: string | null;
    if (this.smart) {
      const v = env.vals[this.valueSlot]!;
      url = v ? finishUrl(this.prefix + v, this.prefix ? undefined : this.valueKind) : null;
    } else {
      url = finishUrl(this.prefix, undefined);
    }
    if (url !== null) {
      let query = this.staticQuery;
      if (!query) {
        for (const p of this.params) {
          let pair = p.fixed;
          if (pair === undefined) {
            let value = '';
            for (const part of p.parts) value += part.slot >= 0 ? singleLine(env.vals[part.slot]!) : part.literal;
            pair = value ? `${p.key}=${encodeURIComponent(value)}` : '';
          }
          if (pair) query += query ? `&${pair}` : pair;
        }
      }
      url = withQuery(url, query);
    }
    env.urls[this.urlSlot] = url;
    return url;
  }

  /** Empty means the token depending on this link is left out. */
  empty(env: Env): boolean {
    return this.smart && env.vals[this.valueSlot] === '';
  }
}

/** `label (url)`, or the label alone when it already is the address. */
function linkText(label: string, url: string | null): string {
  if (!url || !label) return label;
  const scheme = allowedScheme(url);
  let bare = url.slice(scheme === 'https' ? 8 : scheme === 'http' ? 7 : scheme === 'mailto' ? 7 : 4);
  if (bare.includes('%')) {
    try {
      bare = decodeURIComponent(bare);
    } catch {
      // A stray % in a URL: compare the encoded form.
    }
  }
  if (bare === label) return label;
  let same: boolean;
  if (scheme === 'tel') same = bare.replace(TEL_NOISE_G, '') === label.replace(TEL_NOISE_G, '');
  else {
    const b = (bare.endsWith('/') ? bare.slice(0, -1) : bare).toLowerCase();
    const l = label.toLowerCase();
    same = b === l || (scheme !== 'mailto' && b === `www.${l}`);
  }
  return same ? label : `${label} (${url})`;
}

// ---------------------------------------------------------------------------------------------
// Tokens and lines

interface CToken {
  /** Depends on a smart field: may resolve empty. */
  readonly smart: boolean;
  /** Output differs between teammates (smart, or a link with smart query parameters). */
  readonly dynamic: boolean;
  /** HTML, or null when the token resolves empty. */
  html(env: Env): string | null;
  text(env: Env): string | null;
}

class LiteralToken implements CToken {
  readonly smart = false;
  readonly dynamic: boolean;
  private readonly fixedHtml: string;
  private readonly fixedText: string | undefined;
  /** The token without its link (a link that resolves to nothing safe). */
  private readonly plainHtml: string;
  private readonly value: string;
  private readonly open: string;
  private readonly close: string;
  private readonly href: CompiledHref | undefined;

  constructor(t: TextToken, cell: ResolvedTextStyle, href: CompiledHref | undefined) {
    const style = resolveTextStyle(t.textStyle);
    this.value = cleanLiteral(t.value ?? '');
    this.href = href;
    this.dynamic = href !== undefined && href.fixed === undefined;
    const body = escapeMultiline(this.value);
    if (href) {
      this.open = `<a href="`;
      this.close = `" style="${escapeAttr(linkTextCss(style, cell))}">${body}</a>`;
    } else {
      const diff = diffTextCss(style, cell);
      this.open = diff ? `<span style="${escapeAttr(diff)}">` : '';
      this.close = diff ? '</span>' : '';
    }
    const fixed = href?.fixed;
    this.plainHtml = spanFor(style, cell, body);
    this.fixedHtml = !href ? this.open + body + this.close : fixed === null ? this.plainHtml : fixed !== undefined ? this.open + escapeAttr(fixed) + this.close : '';
    this.fixedText = !href ? this.value : fixed !== undefined ? linkText(this.value, fixed) : undefined;
  }

  html(env: Env): string {
    if (!this.href || this.href.fixed !== undefined) return this.fixedHtml;
    const url = this.href.url(env);
    return url === null ? this.plainHtml : this.open + escapeAttr(url) + this.close;
  }

  text(env: Env): string {
    return this.fixedText ?? linkText(this.value, this.href!.url(env));
  }
}

function spanFor(style: ResolvedTextStyle, cell: ResolvedTextStyle, body: string): string {
  const diff = diffTextCss(style, cell);
  return diff ? `<span style="${escapeAttr(diff)}">${body}</span>` : body;
}

/** A literal token whose link comes from a smart field: it resolves empty with that field. */
class SmartLinkToken implements CToken {
  readonly smart = true;
  readonly dynamic = true;
  private readonly inner: LiteralToken;
  private readonly href: CompiledHref;

  constructor(t: TextToken, cell: ResolvedTextStyle, href: CompiledHref) {
    this.inner = new LiteralToken(t, cell, href);
    this.href = href;
  }

  html(env: Env): string | null {
    return this.href.empty(env) ? null : this.inner.html(env);
  }

  text(env: Env): string | null {
    return this.href.empty(env) ? null : this.inner.text(env);
  }
}

/** A token showing a teammate's value. */
class ValueToken implements CToken {
  readonly smart = true;
  readonly dynamic = true;
  private readonly slot: number;
  private readonly open: string;
  private readonly close: string;
  private readonly linkClose: string;
  private readonly href: CompiledHref | undefined;

  constructor(t: TextToken, cell: ResolvedTextStyle, slots: Slots, href: CompiledHref | undefined) {
    this.slot = slots.slot(t.smartFieldUuid!);
    this.href = href;
    const style = resolveTextStyle(t.textStyle);
    const diff = diffTextCss(style, cell);
    this.open = diff ? `<span style="${escapeAttr(diff)}">` : '';
    this.close = diff ? '</span>' : '';
    this.linkClose = `" style="${escapeAttr(linkTextCss(style, cell))}">`;
  }

  private escaped(env: Env): string {
    let e = env.esc[this.slot];
    if (e === undefined) {
      e = escapeMultiline(env.vals[this.slot]!);
      env.esc[this.slot] = e;
    }
    return e;
  }

  html(env: Env): string | null {
    if (env.vals[this.slot] === '' || this.href?.empty(env)) return null;
    const body = this.escaped(env);
    if (this.href) {
      const url = this.href.url(env);
      if (url !== null) return `<a href="${escapeAttr(url)}${this.linkClose}${body}</a>`;
    }
    return this.open + body + this.close;
  }

  text(env: Env): string | null {
    const v = env.vals[this.slot]!;
    if (v === '' || this.href?.empty(env)) return null;
    return this.href ? linkText(v, this.href.url(env)) : v;
  }
}

/** A smart token whose field is an image: `<img>`, optionally linked. */
class ImageToken implements CToken {
  readonly smart = true;
  readonly dynamic = true;
  private readonly slot: number;
  private readonly imgTail: string;
  private readonly href: CompiledHref | undefined;

  constructor(t: TextToken, width: number, alone: boolean, slots: Slots, href: CompiledHref | undefined) {
    this.slot = slots.slot(t.smartFieldUuid!);
    this.href = href;
    const w = Math.round(width);
    const alt = escapeAttr(singleLine(cleanLiteral(t.value ?? '')));
    this.imgTail = `" width="${w}" alt="${alt}" style="${alone ? 'display:block;' : 'vertical-align:middle;'}border:0;width:${w}px;max-width:${w}px;height:auto">`;
  }

  private src(env: Env): string | null {
    const v = env.vals[this.slot]!;
    if (!v) return null;
    const asset = env.assets?.get(v);
    const url = asset ? cleanValue(asset.url) : singleLine(v);
    const scheme = allowedScheme(url);
    return scheme === 'https' || scheme === 'http' ? encodeUrl(url) : null;
  }

  html(env: Env): string | null {
    const src = this.src(env);
    if (src === null || this.href?.empty(env)) return null;
    const img = `<img src="${escapeAttr(src)}${this.imgTail}`;
    const url = this.href?.url(env) ?? null;
    return url === null ? img : `<a href="${escapeAttr(url)}" style="text-decoration:none">${img}</a>`;
  }

  text(env: Env): string | null {
    // Images have no plain-text form; the line still counts as shown.
    return this.src(env) === null || this.href?.empty(env) ? null : '';
  }
}

/**
 * Tokens of one line with the empty-field rules. `droppable` lines (text blocks, list item values)
 * vanish when every smart token is empty; labels are not droppable by themselves.
 */
class Line {
  private readonly tokens: CToken[];
  private readonly first: number;
  private readonly last: number;
  /** For a literal between smart tokens, the index of the next smart token. */
  private readonly nextSmart: Int32Array;
  readonly hasSmart: boolean;
  readonly fixedHtml: string | undefined;
  readonly fixedText: string | undefined;

  constructor(tokens: CToken[]) {
    this.tokens = tokens;
    this.first = tokens.findIndex((t) => t.smart);
    this.last = tokens.findLastIndex((t) => t.smart);
    this.hasSmart = this.first >= 0;
    this.nextSmart = new Int32Array(tokens.length).fill(-1);
    for (let i = tokens.length - 2, next = -1; i >= 0; i--) {
      if (tokens[i + 1]!.smart) next = i + 1;
      this.nextSmart[i] = next;
    }
    if (!tokens.some((t) => t.dynamic)) {
      const env = EMPTY_ENV;
      this.fixedHtml = tokens.map((t) => t.html(env) ?? '').join('');
      this.fixedText = tokens.map((t) => t.text(env) ?? '').join('');
    }
  }

  /**
   * HTML of the line, or null when it is dropped; its plain text is left in `env.text`. HTML and
   * text come from one pass, so they always agree on what is shown.
   */
  render(env: Env, droppable: boolean): string | null {
    if (this.fixedHtml !== undefined) {
      env.text = this.fixedText!;
      return this.fixedHtml;
    }
    const tokens = this.tokens;
    const rh = env.scratchHtml;
    const rt = env.scratchText;
    let any = false;
    if (this.hasSmart) {
      for (let i = this.first; i <= this.last; i++) {
        const t = tokens[i]!;
        if (!t.smart) continue;
        const h = t.html(env);
        rh[i] = h;
        if (h !== null) {
          rt[i] = t.text(env);
          any = true;
        }
      }
      if (!any && droppable) return null;
    }
    let html = '';
    let text = '';
    let shown = false;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t.smart) {
        const h = rh[i]!;
        if (h !== null) {
          html += h;
          text += rt[i]!;
          shown = true;
        }
      } else if (i < this.first || i > this.last || (shown && rh[this.nextSmart[i]!] !== null)) {
        html += t.html(env)!;
        text += t.text(env)!;
      }
    }
    env.text = text;
    return html;
  }
}

const EMPTY_ENV: Env = { vals: [], esc: [], urls: [], assets: undefined, scratchHtml: [], scratchText: [], text: '', lines: [] };

function compileTokens(tokens: TextToken[], cell: ResolvedTextStyle, slots: Slots, imageWidth: number): Line {
  const alone = tokens.length === 1;
  const out: CToken[] = tokens.map((t) => {
    const href = t.href ? new CompiledHref(t.href, slots) : undefined;
    if (t.smartFieldUuid !== undefined) {
      if (slots.kind(t.smartFieldUuid) === 'image') return new ImageToken(t, imageWidth, alone, slots, href);
      return new ValueToken(t, cell, slots, href);
    }
    if (href?.smart) return new SmartLinkToken(t, cell, href);
    return new LiteralToken(t, cell, href);
  });
  return new Line(out);
}

/** The style a text cell sets: its first token's. */
function cellStyleOf(tokens: readonly TextToken[] | undefined): ResolvedTextStyle {
  return resolveTextStyle(tokens?.[0]?.textStyle);
}

// ---------------------------------------------------------------------------------------------
// Blocks

interface CBlock {
  /**
   * The block's own cell(s) with content, or '' when it is dropped. A block that is shown appends
   * its plain-text lines to `env.lines`; a dropped one appends nothing.
   */
  slot(env: Env): string;
}

interface SlotContext {
  /** Parent is a horizontal stack: the cell gets a vertical alignment. */
  valign?: 'top' | 'middle' | 'bottom';
}

/** Opening and closing of the cell(s) a block renders into. */
function cellFrame(box: Box, ctx: SlotContext, extraCss = ''): { open: string; close: string } {
  const valignAttr = ctx.valign ? ` valign="${ctx.valign}"` : '';
  const valignCss = ctx.valign ? `vertical-align:${ctx.valign}` : '';
  const widthAttr = box.width !== undefined ? ` width="${Math.round(box.width)}"` : '';
  const inner = joinCss(paddingCss(box.padding), box.background ? `background-color:${box.background}` : '', box.width !== undefined ? `width:${px(box.width)}` : '', extraCss);
  if (!hasMargin(box)) {
    const css = joinCss(inner, valignCss);
    return { open: `<td${widthAttr}${valignAttr}${css ? ` style="${escapeAttr(css)}"` : ''}>`, close: '</td>' };
  }
  const outer = joinCss(paddingCss(box.margin), valignCss);
  return {
    open: `<td${valignAttr} style="${escapeAttr(outer)}">${TABLE_OPEN}<tr><td${widthAttr}${inner ? ` style="${escapeAttr(inner)}"` : ''}>`,
    close: `</td></tr>${TABLE_CLOSE}</td>`,
  };
}

class TextNode implements CBlock {
  private readonly line: Line;
  private readonly open: string;
  private readonly close: string;
  private readonly fixed: string | undefined;
  private readonly fixedText: string | undefined;

  constructor(b: TextBlock, ctx: SlotContext, slots: Slots) {
    const box = resolveBox(b.blockStyle);
    const cell = cellStyleOf(b.tokens);
    this.line = compileTokens(b.tokens, cell, slots, box.width ?? DEFAULTS.imageWidth);
    ({ open: this.open, close: this.close } = cellFrame(box, ctx, fullTextCss(cell)));
    if (this.line.fixedHtml !== undefined) {
      this.fixed = this.open + this.line.fixedHtml + this.close;
      this.fixedText = this.line.fixedText;
    }
  }

  slot(env: Env): string {
    if (this.fixed !== undefined) {
      if (this.fixedText) env.lines.push(this.fixedText);
      return this.fixed;
    }
    const h = this.line.render(env, true);
    if (h === null) return '';
    if (env.text) env.lines.push(env.text);
    return this.open + h + this.close;
  }
}

/** A spacer row: the height attribute for Outlook, font-size = line-height = gap for everyone else. */
function spacerRow(gap: number): string {
  return `<tr><td height="${Math.round(gap)}" style="font-size:${px(gap)};line-height:${px(gap)}">&nbsp;</td></tr>`;
}

function spacerCell(gap: number): string {
  return `<td width="${Math.round(gap)}" style="width:${px(gap)};font-size:0">&nbsp;</td>`;
}

class StackNode implements CBlock {
  private readonly children: CBlock[];
  private readonly vertical: boolean;
  private readonly spacer: string;
  private readonly open: string;
  private readonly close: string;
  /** A stack with no children by design renders its box (a divider, a coloured band). */
  private readonly emptyByDesign: string | undefined;

  constructor(b: StackBlock, ctx: SlotContext, slots: Slots) {
    const box = resolveBox(b.blockStyle);
    this.vertical = b.direction !== 'horizontal';
    const childCtx: SlotContext = this.vertical ? {} : { valign: b.verticalAlign ?? 'top' };
    this.children = b.children.map((c) => compileBlock(c, childCtx, slots)).filter((c): c is CBlock => c !== null);
    this.spacer = box.gap > 0 ? (this.vertical ? spacerRow(box.gap) : spacerCell(box.gap)) : '';
    const empty = b.children.length === 0;
    ({ open: this.open, close: this.close } = cellFrame(box, ctx, empty ? 'font-size:0;line-height:0' : ''));
    if (empty) this.emptyByDesign = `${this.open}&nbsp;${this.close}`;
  }

  /** Stacks whose children were all hidden are removed at compile time by compileBlock. */
  get isEmpty(): boolean {
    return this.children.length === 0 && this.emptyByDesign === undefined;
  }

  inner(env: Env): string {
    let rows = '';
    let n = 0;
    for (const c of this.children) {
      const h = c.slot(env);
      if (!h) continue;
      if (n > 0) rows += this.spacer;
      rows += this.vertical ? `<tr>${h}</tr>` : h;
      n++;
    }
    if (n === 0) return '';
    return this.vertical ? TABLE_OPEN + rows + TABLE_CLOSE : `${TABLE_OPEN}<tr>${rows}</tr>${TABLE_CLOSE}`;
  }

  slot(env: Env): string {
    if (this.emptyByDesign !== undefined) return this.emptyByDesign;
    const inner = this.inner(env);
    return inner ? this.open + inner + this.close : '';
  }
}

/** One list item: an optional label and the value line. */
class ItemNode {
  private readonly label: Line | undefined;
  private readonly value: Line;
  readonly open: string;
  readonly close: string;

  constructor(b: ListItemBlock, cell: ResolvedTextStyle, slots: Slots, frame: { open: string; close: string }) {
    this.label = b.label && b.label.visible !== false ? compileTokens(b.label.tokens, cell, slots, DEFAULTS.imageWidth) : undefined;
    this.value = compileTokens(b.tokens, cell, slots, DEFAULTS.imageWidth);
    this.open = frame.open;
    this.close = frame.close;
  }

  /** HTML of the item, or null when it is dropped; its text is left in `env.text`. */
  render(env: Env): string | null {
    const v = this.value.render(env, true);
    if (v === null) return null;
    if (!this.label) return v;
    const valueText = env.text;
    const l = this.label.render(env, false);
    env.text = (l === null ? '' : env.text) + valueText;
    return (l ?? '') + v;
  }
}

class ListNode implements CBlock {
  private readonly items: ItemNode[];
  private readonly vertical: boolean;
  private readonly spacer: string;
  private readonly separatorHtml: string;
  private readonly separatorText: string;
  private readonly open: string;
  private readonly close: string;

  constructor(b: ListBlock, ctx: SlotContext, slots: Slots) {
    const box = resolveBox(b.blockStyle);
    this.vertical = b.direction !== 'horizontal';
    const visible = b.children.filter((c) => c.visible !== false);
    const listCell = cellStyleOf(visible[0]?.tokens);
    this.items = visible.map((c) => {
      const cell = this.vertical ? cellStyleOf(c.tokens) : listCell;
      const frame = this.vertical ? cellFrame(resolveBox(c.blockStyle), {}, fullTextCss(cell)) : { open: '', close: '' };
      return new ItemNode(c, cell, slots, frame);
    });
    this.spacer = this.vertical && box.gap > 0 ? spacerRow(box.gap) : '';
    this.separatorText = cleanLiteral(b.separator ?? DEFAULTS.separator);
    this.separatorHtml = spanFor(b.separatorStyle ? resolveTextStyle(b.separatorStyle) : listCell, listCell, escapeText(this.separatorText));
    ({ open: this.open, close: this.close } = cellFrame(box, ctx, this.vertical ? '' : fullTextCss(listCell)));
  }

  get isEmpty(): boolean {
    return this.items.length === 0;
  }

  slot(env: Env): string {
    let body = '';
    let line = '';
    let n = 0;
    for (const item of this.items) {
      const h = item.render(env);
      if (h === null) continue;
      if (this.vertical) {
        if (n > 0) body += this.spacer;
        body += `<tr>${item.open}${h}${item.close}</tr>`;
        if (env.text) env.lines.push(env.text);
      } else {
        if (n > 0) {
          body += this.separatorHtml;
          line += this.separatorText;
        }
        body += h;
        line += env.text;
      }
      n++;
    }
    if (n === 0) return '';
    if (!this.vertical) {
      if (line) env.lines.push(line);
      return this.open + body + this.close;
    }
    return this.open + TABLE_OPEN + body + TABLE_CLOSE + this.close;
  }
}

class SocialItem {
  readonly href: CompiledHref;
  readonly name: string;
  readonly tail: string;

  constructor(network: SocialNetwork, href: CompiledHref, size: number) {
    this.href = href;
    this.name = SOCIAL_NETWORK_NAMES[network];
    const s = Math.round(size);
    this.tail = `"><img src="${escapeAttr(SOCIAL_ICONS[network])}" width="${s}" height="${s}" alt="${escapeAttr(this.name)}" style="display:block;border:0;width:${s}px;height:${s}px"></a></td>`;
  }
}

class SocialListNode implements CBlock {
  private readonly items: SocialItem[];
  private readonly spacer: string;
  private readonly open: string;
  private readonly close: string;

  constructor(b: SocialListBlock, ctx: SlotContext, slots: Slots) {
    const box = resolveBox(b.blockStyle, 6);
    const size = b.iconSize ?? DEFAULTS.iconSize;
    this.items = b.children.filter((c) => c.visible !== false && Object.hasOwn(SOCIAL_ICONS, c.network)).map((c) => new SocialItem(c.network, new CompiledHref(c.href, slots), size));
    this.spacer = box.gap > 0 ? spacerCell(box.gap) : '';
    ({ open: this.open, close: this.close } = cellFrame(box, ctx));
  }

  get isEmpty(): boolean {
    return this.items.length === 0;
  }

  slot(env: Env): string {
    let cells = '';
    let n = 0;
    for (const item of this.items) {
      const url = item.href.empty(env) ? null : item.href.url(env);
      if (url === null) continue;
      if (n > 0) cells += this.spacer;
      cells += `<td><a href="${escapeAttr(url)}${item.tail}`;
      env.lines.push(`${item.name}: ${url}`);
      n++;
    }
    return n === 0 ? '' : `${this.open}${TABLE_OPEN}<tr>${cells}</tr>${TABLE_CLOSE}${this.close}`;
  }
}

function compileBlock(b: Block, ctx: SlotContext, slots: Slots): CBlock | null {
  if (b.visible === false) return null;
  let node: CBlock & { isEmpty?: boolean };
  switch (b.type) {
    case 'stack':
      node = new StackNode(b, ctx, slots);
      break;
    case 'text':
      node = new TextNode(b, ctx, slots);
      break;
    case 'list':
      node = new ListNode(b, ctx, slots);
      break;
    case 'socialList':
      node = new SocialListNode(b, ctx, slots);
      break;
    default:
      // Item blocks only appear inside their lists; the schema rejects them elsewhere.
      return null;
  }
  return node.isEmpty ? null : node;
}

// ---------------------------------------------------------------------------------------------
// The compiled template

export interface RenderedParts {
  html: string;
  text: string;
}

export class CompiledTemplate {
  /** Ids of the smart fields the template reads. */
  readonly smartFieldIds: readonly string[];
  private readonly root: CBlock | null;
  private readonly urlCount: number;
  /** Reused by every render of this template: rendering is synchronous, so renders never overlap. */
  private readonly scratchHtml: (string | null)[] = [];
  private readonly scratchText: (string | null)[] = [];

  constructor(tree: ContentTree, opts: CompileOptions = {}) {
    const slots = new Slots(opts.smartFieldKinds);
    this.root = tree && tree.type === 'stack' ? compileBlock(tree, {}, slots) : null;
    this.smartFieldIds = slots.ids;
    this.urlCount = slots.urlCount;
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
    return { vals, esc: new Array(ids.length), urls: new Array(this.urlCount), assets: input.assets, scratchHtml: this.scratchHtml, scratchText: this.scratchText, text: '', lines: [] };
  }

  /** The HTML (a single table, or '' when every block is dropped) and the plain-text alternative. */
  render(input: RenderEnvInput): RenderedParts {
    if (!this.root) return { html: '', text: '' };
    const env = this.env(input);
    const cell = this.root.slot(env);
    return { html: cell ? `${TABLE_OPEN}<tr>${cell}</tr>${TABLE_CLOSE}` : '', text: env.lines.join('\n') };
  }
}

/** Compiles a validated tree; reuse the result for every teammate of the template. */
export function compileTemplate(tree: ContentTree, opts: CompileOptions = {}): CompiledTemplate {
  return new CompiledTemplate(tree, opts);
}
