/**
 * Tokens and lines of a compiled template: literal, smart-value, smart-link and image tokens,
 * rendered to HTML and plain text per teammate. See compile.ts.
 */
import { allowedScheme, encodeUrl, escapeAttr, escapeMultiline, singleLine } from './escape.ts';
import { cleanLiteral, cleanValue } from '../text.ts';
import type { TextToken } from './schema.ts';
import { diffTextCss, linkTextCss, type ResolvedTextStyle, resolveTextStyle } from './style.ts';
import type { Slots } from './program.ts';
import { type Env } from './program.ts';
import { CompiledHref, linkText, shownUrl } from './links.ts';
import { directionOf } from './direction.ts';

interface CToken {
  /** Depends on a smart field: may resolve empty. */
  readonly smart: boolean;
  /** Output differs between teammates (smart, or a link with smart query parameters). */
  readonly dynamic: boolean;
  /** Writes a link: its output also depends on the render's `link` (tracked links). */
  readonly linked: boolean;
  /** Writes an `<img>`: its cell must not hold its lines to an exact height. */
  readonly image?: boolean;
  /** HTML, or null when the token resolves empty. */
  html(env: Env): string | null;
  text(env: Env): string | null;
}

class LiteralToken implements CToken {
  readonly smart = false;
  readonly dynamic: boolean;
  readonly linked: boolean;
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
    this.linked = href !== undefined && href.fixed !== null;
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
    this.fixedHtml = !href
      ? this.open + body + this.close
      : fixed === null
        ? this.plainHtml
        : fixed !== undefined
          ? this.open + escapeAttr(fixed) + this.close
          : '';
    this.fixedText = !href ? this.value : fixed !== undefined ? linkText(this.value, fixed) : undefined;
  }

  html(env: Env): string {
    if (!this.href || (this.href.fixed !== undefined && env.link === undefined)) return this.fixedHtml;
    const url = this.href.url(env);
    return url === null ? this.plainHtml : this.open + escapeAttr(shownUrl(env, url)) + this.close;
  }

  text(env: Env): string {
    if (this.fixedText !== undefined && (!this.href || env.link === undefined)) return this.fixedText;
    const url = this.href!.url(env);
    return linkText(this.value, url, url === null ? null : shownUrl(env, url));
  }
}

export function spanFor(style: ResolvedTextStyle, cell: ResolvedTextStyle, body: string): string {
  const diff = diffTextCss(style, cell);
  return diff ? `<span style="${escapeAttr(diff)}">${body}</span>` : body;
}

/** A literal token whose link comes from a smart field: it resolves empty with that field. */
class SmartLinkToken implements CToken {
  readonly smart = true;
  readonly dynamic = true;
  readonly linked = true;
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

/**
 * A token showing a teammate's value. The value is a run of its own direction: a span with `dir`
 * (direction.ts), which isolates it from the text around it. Without it an Arabic or Hebrew title
 * before a phone on one line turns "+1 415 555 0109" into "0109 555 415 1+". The attribute goes on
 * a span, never on the link (Outlook for Windows mishandles `dir` on `<a>`); `<bdi>` is dropped by
 * Gmail, Outlook and Yahoo, and Unicode isolates (U+2068, U+2069) would travel into replies and
 * copied text (docs/rendering.md, Right-to-left values).
 */
class ValueToken implements CToken {
  readonly smart = true;
  readonly dynamic = true;
  readonly linked: boolean;
  private readonly slot: number;
  private readonly open: string;
  private readonly close: string;
  private readonly linkClose: string;
  private readonly href: CompiledHref | undefined;

  constructor(t: TextToken, cell: ResolvedTextStyle, slots: Slots, href: CompiledHref | undefined) {
    this.slot = slots.slot(t.smartFieldUuid!);
    this.href = href;
    this.linked = href !== undefined;
    const style = resolveTextStyle(t.textStyle);
    const diff = diffTextCss(style, cell);
    this.open = `<span${diff ? ` style="${escapeAttr(diff)}"` : ''} dir="`;
    this.close = '</span>';
    this.linkClose = `" style="${escapeAttr(linkTextCss(style, cell))}"><span dir="`;
  }

  /** The value's direction, the end of the span's opening tag, and the escaped value: `rtl">...`. */
  private escaped(env: Env): string {
    let e = env.esc[this.slot];
    if (e === undefined) {
      const v = env.vals[this.slot]!;
      e = `${directionOf(v)}">${escapeMultiline(v)}`;
      env.esc[this.slot] = e;
    }
    return e;
  }

  html(env: Env): string | null {
    if (env.vals[this.slot] === '' || this.href?.empty(env)) return null;
    const body = this.escaped(env);
    if (this.href) {
      const url = this.href.url(env);
      if (url !== null) return `<a href="${escapeAttr(shownUrl(env, url))}${this.linkClose}${body}</span></a>`;
    }
    return this.open + body + this.close;
  }

  text(env: Env): string | null {
    const v = env.vals[this.slot]!;
    if (v === '' || this.href?.empty(env)) return null;
    if (!this.href) return v;
    const url = this.href.url(env);
    return linkText(v, url, url === null ? null : shownUrl(env, url));
  }
}

/** What follows an `<img>`'s src: its width, alt text from the token's value, and its style. */
function imgTail(t: TextToken, width: number, alone: boolean): string {
  const w = Math.round(width);
  const alt = escapeAttr(singleLine(cleanLiteral(t.value ?? '')));
  return `" width="${w}" alt="${alt}" style="${alone ? 'display:block;' : 'vertical-align:middle;'}border:0;width:${w}px;max-width:${w}px;height:auto">`;
}

/** `<img>` of `src`, inside a link to `url` when there is one (each as the render writes it: tracked or not). */
function linkedImg(env: Env, src: string, tail: string, url: string | null): string {
  const img = `<img src="${escapeAttr(env.image === undefined ? src : env.image(src))}${tail}`;
  return url === null ? img : `<a href="${escapeAttr(shownUrl(env, url))}" style="text-decoration:none">${img}</a>`;
}

/** A smart token whose field is an image: `<img>`, optionally linked. */
class ImageToken implements CToken {
  readonly smart = true;
  readonly dynamic = true;
  readonly linked = true;
  readonly image = true;
  private readonly slot: number;
  private readonly imgTail: string;
  private readonly href: CompiledHref | undefined;

  constructor(t: TextToken, width: number, alone: boolean, slots: Slots, href: CompiledHref | undefined) {
    this.slot = slots.slot(t.smartFieldUuid!);
    this.href = href;
    this.imgTail = imgTail(t, width, alone);
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
    return linkedImg(env, src, this.imgTail, this.href?.url(env) ?? null);
  }

  text(env: Env): string | null {
    // Images have no plain-text form; the line still counts as shown.
    return this.src(env) === null || this.href?.empty(env) ? null : '';
  }
}

/**
 * A token naming a workspace asset (`assetUuid`): `<img>` of the asset's public URL, optionally
 * linked. The URL comes from the render's asset map; an asset missing there (deleted since) renders
 * nothing. It is not a smart token: its line is never dropped because of it.
 */
class AssetToken implements CToken {
  readonly smart = false;
  readonly dynamic = true;
  readonly linked = true;
  readonly image = true;
  private readonly id: string;
  private readonly imgTail: string;
  private readonly href: CompiledHref | undefined;

  constructor(t: TextToken, width: number, alone: boolean, slots: Slots, href: CompiledHref | undefined) {
    this.id = t.assetUuid!.toLowerCase();
    slots.assetIds.add(this.id);
    this.href = href;
    this.imgTail = imgTail(t, width, alone);
  }

  html(env: Env): string {
    const asset = env.assets?.get(this.id);
    const url = asset ? encodeUrl(cleanValue(asset.url)) : null;
    if (url === null) return '';
    return linkedImg(env, url, this.imgTail, this.href?.url(env) ?? null);
  }

  text(): string {
    return '';
  }
}

/**
 * Tokens of one line with the empty-field rules. `droppable` lines (text blocks, list item values)
 * vanish when every smart token is empty; labels are not droppable by themselves.
 *
 * A line renders in two passes: `prepare` decides which smart tokens show (from their plain text,
 * which is null exactly when their HTML is), then `write` writes the HTML in document order, so a
 * render's `image` is asked for the images in the order they appear.
 */
export class Line {
  private readonly tokens: CToken[];
  private readonly first: number;
  private readonly last: number;
  /** For a literal between smart tokens, the index of the next smart token. */
  private readonly nextSmart: Int32Array;
  /** The plain text of each smart token between `prepare` and `write` (null: not shown). Renders are synchronous and never overlap. */
  private readonly texts: (string | null)[];
  readonly hasSmart: boolean;
  /** Some token writes an image (its cell gets no exact line height: style.ts fullTextCss). */
  readonly hasImage: boolean;
  /** Some token writes a link: a render with `link` cannot use the finished HTML. */
  readonly linked: boolean;
  readonly fixedHtml: string | undefined;
  readonly fixedText: string | undefined;

  constructor(tokens: CToken[]) {
    this.tokens = tokens;
    this.first = tokens.findIndex((t) => t.smart);
    this.last = tokens.findLastIndex((t) => t.smart);
    this.hasSmart = this.first >= 0;
    this.hasImage = tokens.some((t) => t.image === true);
    this.linked = tokens.some((t) => t.linked);
    this.texts = new Array<string | null>(tokens.length).fill(null);
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

  /** Whether this render can use the HTML finished at compile time. */
  private isFixed(env: Env): boolean {
    return this.fixedHtml !== undefined && (env.link === undefined || !this.linked);
  }

  /**
   * HTML of the line, or null when it is dropped; its plain text is left in `env.text`. HTML and
   * text come from one pass, so they always agree on what is shown.
   */
  render(env: Env, droppable: boolean): string | null {
    if (this.isFixed(env)) {
      env.text = this.fixedText!;
      return this.fixedHtml!;
    }
    if (this.hasSmart && !this.showSmart(env, droppable)) return null;
    return this.writeTokens(env);
  }

  /** First pass: which smart tokens show; false when the line is dropped. */
  prepare(env: Env, droppable: boolean): boolean {
    return !this.hasSmart || this.isFixed(env) || this.showSmart(env, droppable);
  }

  /** The smart tokens' plain text, null for those not shown; false when none shows and the line may be dropped. */
  private showSmart(env: Env, droppable: boolean): boolean {
    const tokens = this.tokens;
    const texts = this.texts;
    let any = false;
    for (let i = this.first; i <= this.last; i++) {
      const t = tokens[i]!;
      if (!t.smart) continue;
      const s = t.text(env);
      texts[i] = s;
      if (s !== null) any = true;
    }
    return any || !droppable;
  }

  /** Second pass, after `prepare` answered true: the HTML, in document order; the plain text is left in `env.text`. */
  write(env: Env): string {
    if (this.isFixed(env)) {
      env.text = this.fixedText!;
      return this.fixedHtml!;
    }
    return this.writeTokens(env);
  }

  private writeTokens(env: Env): string {
    const tokens = this.tokens;
    const texts = this.texts;
    let html = '';
    let text = '';
    let shown = false;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t.smart) {
        const s = texts[i] as string | null;
        if (s !== null) {
          html += t.html(env)!;
          text += s;
          shown = true;
        }
      } else if (i < this.first || i > this.last || (shown && texts[this.nextSmart[i]!] !== null)) {
        html += t.html(env)!;
        text += t.text(env)!;
      }
    }
    env.text = text;
    return html;
  }
}

const EMPTY_ENV: Env = { vals: [], esc: [], urls: [], assets: undefined, link: undefined, image: undefined, optOutUrl: undefined, text: '', lines: [] };

export function compileTokens(tokens: TextToken[], cell: ResolvedTextStyle, slots: Slots, imageWidth: number): Line {
  const alone = tokens.length === 1;
  const out: CToken[] = tokens.map((t) => {
    const href = t.href ? new CompiledHref(t.href, slots) : undefined;
    if (t.assetUuid !== undefined) return new AssetToken(t, imageWidth, alone, slots, href);
    if (t.smartFieldUuid !== undefined) {
      if (slots.kind(t.smartFieldUuid) === 'image') return new ImageToken(t, imageWidth, alone, slots, href);
      return new ValueToken(t, cell, slots, href);
    }
    if (href?.smart) return new SmartLinkToken(t, cell, href);
    return new LiteralToken(t, cell, href);
  });
  return new Line(out);
}

/**
 * The style a text cell sets: its first token's, but never an underline. A decoration set on a box
 * is drawn under all of its text and cannot be taken off by a child (`text-decoration:none` on a
 * span or link inside only stops its own decoration), so an underline belongs to the token's own
 * span or link, never to the cell.
 */
export function cellStyleOf(tokens: readonly TextToken[] | undefined): ResolvedTextStyle {
  return { ...resolveTextStyle(tokens?.[0]?.textStyle), underline: false };
}
