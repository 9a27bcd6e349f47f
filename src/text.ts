/**
 * Cleaning of untrusted text before anything shows or compares it: smart-field values from
 * directories and people, and a template's literal text. Rendering escapes the result
 * (render/escape.ts); campaign conditions compare it (campaigns/choice.ts).
 *
 * `cleanValue` trims a value, turns CR/LF into LF, removes other control characters and the bidi
 * embedding/override/isolate controls (U+202A–U+202E, U+2066–U+2069, which could visually reorder
 * the rest of a signature), and replaces lone surrogates with U+FFFD so the output is valid UTF-8.
 */

// Removed from every value: C0 controls but LF (CR is turned into LF first), DEL and C1 controls,
// the bidi embedding/override/isolate controls, and Unicode noncharacters (U+FDD0–U+FDEF and every
// code point ending in FFFE or FFFF), which HTML parsers report as errors.
const UNCLEAN =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufffe\uffff]|[\ud83f\ud87f\ud8bf\ud8ff\ud93f\ud97f\ud9bf\ud9ff\uda3f\uda7f\udabf\udaff\udb3f\udb7f\udbbf\udbff][\udffe\udfff]/;
const EDGE_SPACE = /\s/;
const DROP_G =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\ufdd0-\ufdef\ufffe\uffff]|[\ud83f\ud87f\ud8bf\ud8ff\ud93f\ud97f\ud9bf\ud9ff\uda3f\uda7f\udabf\udaff\udb3f\udb7f\udbbf\udbff][\udffe\udfff]/g;
const CRLF_G = /\r\n?/g;
const SPACES_AROUND_LF_G = /[ \t]*\n[ \t]*/g;
const MANY_LF_G = /\n{2,}/g;

/** ES2024 string methods (Node ≥ 20 has them; the TypeScript lib here is ES2023). */
type Es2024String = string & { isWellFormed(): boolean; toWellFormed(): string };

/** Lone surrogates replaced with U+FFFD, so encoders never throw and the UTF-8 is valid. */
export function wellFormed(s: string): string {
  const w = s as Es2024String;
  return w.isWellFormed() ? s : w.toWellFormed();
}

/** A smart-field value made safe to show; '' when nothing visible is left. */
export function cleanValue(raw: string | null | undefined): string {
  if (!raw) return '';
  let s = wellFormed(raw);
  if (!UNCLEAN.test(s) && !EDGE_SPACE.test(s[0]!) && !EDGE_SPACE.test(s[s.length - 1]!)) return s;
  s = s.replace(CRLF_G, '\n').replace(DROP_G, '').trim();
  if (s.includes('\n')) s = s.replace(SPACES_AROUND_LF_G, '\n').replace(MANY_LF_G, '\n');
  return s;
}

/**
 * Literal template text cleaned like a value, but keeping its spaces: separators such as " | "
 * rely on them.
 */
export function cleanLiteral(s: string): string {
  const w = wellFormed(s);
  return UNCLEAN.test(w) ? w.replace(CRLF_G, '\n').replace(DROP_G, '') : w;
}
