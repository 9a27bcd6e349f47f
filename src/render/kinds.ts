/**
 * What a smart field's kind allows as a value. The same check runs where values are written: the API
 * (PATCH /v1/teammates/{id}: 422 `invalid_value` naming the field) and directory syncs (the value is
 * left empty and reported in the run's `error_details`). A value that fails it is never stored, so
 * API consumers and webhook receivers never get it back either.
 *
 * - `text`: anything (the renderer escapes it and removes control and bidi characters).
 * - `email`: one address, `local@domain`: no spaces, quotes, angle brackets, commas, semicolons,
 *   backslashes or parentheses; a domain of dot-separated labels of letters, digits and hyphens.
 * - `phone`: digits with the usual separators (`+`, spaces, `(`, `)`, `-`, `.`, `/`), an optional
 *   extension (`ext. 12`, `x12`, `#12`, `;ext=12`); at least three digits.
 * - `url`: an http or https URL with a host, or a host name with an optional path
 *   (`acme.com/jobs`), which the renderer links as https. `javascript:`, `data:` and every other
 *   scheme are refused.
 * - `image`: an http or https URL with a host (the photo sync writes the asset's public URL), or the
 *   id of a workspace asset. `data:` URLs are refused: mail clients block them, and an SVG one can
 *   carry script.
 */
import { type SmartFieldKind } from './program.ts';

export type { SmartFieldKind };

const EMAIL = /^[\p{L}\p{N}.!#$%&'*+/=?^_`{|}~-]+@[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*$/u;
const PHONE = /^\+?[\d\s().\-/]+(?:\s*(?:ext\.?|x|#|;ext=)\s*\d+)?$/i;
const HOST_AND_PATH = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)+(?::\d{1,5})?(?:[/?#][^\s<>"'`\\]*)?$/u;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const UNSAFE_IN_URL = /[\s<>"'`\\\p{Cc}]/u;

function webUrl(v: string): boolean {
  if (UNSAFE_IN_URL.test(v)) return false;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    return false;
  }
  return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '' && /^https?:\/\//i.test(v);
}

/** What each kind expects, for error messages. */
export const KIND_EXPECTS: Record<SmartFieldKind, string> = {
  text: 'text',
  email: 'an email address such as ada@acme.com',
  phone: 'a phone number such as +44 20 7946 0018 (digits, spaces, + ( ) - . /, an optional extension)',
  url: 'an http(s) URL such as https://acme.com/jobs, or a host name with a path such as acme.com/jobs',
  image: 'an http(s) URL of an image, or the id of a workspace asset',
};

/** True when the value is acceptable for the kind. Values are compared as given (not trimmed). */
export function valueFitsKind(kind: SmartFieldKind, value: string): boolean {
  const v = value.trim();
  switch (kind) {
    case 'text':
      return true;
    case 'email':
      return v.length <= 320 && EMAIL.test(v);
    case 'phone':
      return v.length <= 100 && PHONE.test(v) && (v.match(/\d/g)?.length ?? 0) >= 3;
    case 'url':
      return webUrl(v) || (!/^[a-z][a-z0-9+.-]*:/i.test(v) && HOST_AND_PATH.test(v));
    case 'image':
      return webUrl(v) || UUID.test(v);
  }
}

/** The message of a refused value: the field, its kind and what the kind expects. */
export function kindMismatch(label: string, kind: SmartFieldKind): string {
  return `"${label}" is a ${kind} field; it takes ${KIND_EXPECTS[kind]}.`;
}
