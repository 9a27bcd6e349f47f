/**
 * Links of a compiled template: hrefs finished and query strings built once, or per teammate when
 * a smart field is in them. See compile.ts (Links).
 */
import { allowedScheme, compactTel, encodeUrl, singleLine } from './escape.ts';
import { cleanLiteral } from '../text.ts';
import type { Href } from './schema.ts';
import type { Slots } from './program.ts';
import { type Env, type SmartFieldKind } from './program.ts';

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
export class CompiledHref {
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
    this.staticQuery = dynamicQuery
      ? ''
      : this.params
          .map((p) => p.fixed)
          .filter(Boolean)
          .join('&');
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

/** The address written for `url` in this render: the render's `link` of it (a tracked link), or itself. */
export function shownUrl(env: Env, url: string): string {
  return env.link === undefined ? url : env.link(url);
}

/**
 * `label (url)`, or the label alone when it already is the address. `shown` is the address written
 * in its place (a tracked link); the comparison is with `url`.
 */
export function linkText(label: string, url: string | null, shown: string | null = url): string {
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
  return same ? label : `${label} (${shown})`;
}
