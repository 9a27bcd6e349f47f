/**
 * Escaping of everything that reaches the HTML. All regular expressions are compiled
 * once here; each function tests first and allocates only when there is something to change.
 *
 * - Text content escapes `&`, `<` and `>`. Attribute values are always double-quoted and escape
 *   `&`, `"`, `<` and `>`. Nothing else is needed for a parser to read the value back unchanged.
 *   Both also write non-ASCII characters as numeric references, keeping the HTML pure ASCII.
 * - Smart-field values and literal text are cleaned first (src/text.ts: `cleanValue`, `cleanLiteral`).
 */
import { cleanLiteral } from '../text.ts';

// Non-ASCII characters become numeric character references (`é` → `&#233;`), so the HTML is plain
// ASCII: it reads the same whatever charset a mail client assumes, and hashing it needs no UTF-8
// conversion. The plain-text alternative keeps the characters as they are.
const TEXT_SPECIAL = /[&<>\u0080-\uffff]/;
const TEXT_SPECIAL_G = /[&<>]|[\u{80}-\u{10ffff}]/gu;
const ATTR_SPECIAL = /[&<>"\u0080-\uffff]/;
const ATTR_SPECIAL_G = /[&<>"]|[\u{80}-\u{10ffff}]/gu;
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const entity = (c: string) => ENTITIES[c] ?? `&#${c.codePointAt(0)!};`;

/** Text content: `&`, `<`, `>` and non-ASCII escaped. Input must be well-formed (see cleanValue). */
export function escapeText(s: string): string {
  return TEXT_SPECIAL.test(s) ? s.replace(TEXT_SPECIAL_G, entity) : s;
}

/** A double-quoted attribute value: `&`, `<`, `>`, `"` and non-ASCII escaped. */
export function escapeAttr(s: string): string {
  return ATTR_SPECIAL.test(s) ? s.replace(ATTR_SPECIAL_G, entity) : s;
}

/** Reads back a value written by escapeAttr. */
export function unescapeAttr(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(?:#(\d+)|amp|quot|lt|gt);/g, (m, code: string | undefined) => {
    if (code) return String.fromCodePoint(Number(code));
    return m === '&amp;' ? '&' : m === '&quot;' ? '"' : m === '&lt;' ? '<' : '>';
  });
}

/** Text content where a line feed becomes `<br>` (multi-line values such as postal addresses). */
export function escapeMultiline(s: string): string {
  const e = escapeText(s);
  return e.includes('\n') ? e.replaceAll('\n', '<br>') : e;
}

/**
 * Any other text shown on a page next to a signature (the preview's title and fact sheet): cleaned
 * like the template's own text (control and bidi override characters removed, lone surrogates
 * replaced; see cleanLiteral), then escaped. The one path from untrusted text to HTML text outside
 * the template.
 */
export function cleanText(s: string): string {
  return escapeText(cleanLiteral(s));
}

/** A value that must stay on one line (link parts, conditions): line feeds become spaces. */
export function singleLine(s: string): string {
  return s.includes('\n') ? s.replaceAll('\n', ' ') : s;
}

// Characters kept as they are in a URL: RFC 3986 unreserved and reserved, and `%` starting a valid
// escape. Everything else (spaces, quotes, angle brackets, non-ASCII) is percent-encoded as UTF-8.
const URL_UNSAFE = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})/;
const URL_UNSAFE_G = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})/gu;

/** Percent-encodes what does not belong in a URL; input must be well-formed (see cleanValue). */
export function encodeUrl(s: string): string {
  return URL_UNSAFE.test(s) ? s.replace(URL_UNSAFE_G, encodeURIComponent) : s;
}

const SCHEME = /^(?:(https?):\/\/[^/?#\s]|(mailto):|(tel):)/i;

/**
 * The scheme of a URL when it is one the renderer links to (https, http with a host, mailto, tel),
 * else undefined. `javascript:`, `data:`, relative and malformed links are never emitted.
 */
export function allowedScheme(url: string): 'https' | 'http' | 'mailto' | 'tel' | undefined {
  const m = SCHEME.exec(url);
  if (!m) return undefined;
  return (m[1] ?? m[2] ?? m[3])!.toLowerCase() as 'https' | 'http' | 'mailto' | 'tel';
}

const WHITESPACE = /\s/;
const WHITESPACE_G = /\s+/g;

/** `tel:+1 (555) 010-0000` → `tel:+1(555)010-0000`: RFC 3966 allows visual separators, not spaces. */
export function compactTel(url: string): string {
  return WHITESPACE.test(url) ? url.replace(WHITESPACE_G, '') : url;
}

/** Rounds a px figure to two decimals, so `1e-7` can never reach CSS. */
export function px(n: number): string {
  const r = Math.round(n * 100) / 100;
  return r === 0 ? '0' : `${r}px`;
}
