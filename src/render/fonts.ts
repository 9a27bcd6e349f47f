/**
 * Fonts for the preview page, so that directory names in any script draw their glyphs instead of
 * empty boxes, whatever fonts the machine has (a fresh Linux machine has none for CJK).
 *
 * The fonts arrive with `npm ci`, all under the SIL Open Font License:
 * - Google's Noto Sans Arabic, Hebrew, Devanagari, SC, JP and KR, from Fontsource's packages
 *   (variable: one file per subset for every weight, so bold names are bold). Their CSS lists one
 *   `@font-face` per subset with its `unicode-range`; the page gets the subsets of each font's own
 *   script (a CJK font comes in about a hundred slices, and a page lists only those its text uses).
 * - Twemoji as a COLR (v0) colour font, `twemoji-colr-font` (0.5 MB). Noto Color Emoji's web font
 *   is COLRv1, which the headless shell of @sparticuz/chromium draws as blank space.
 * Faces point at the files with absolute `file://` URLs (the page is a local file, `sigsync render
 * --out`). Latin (U+0000-024F) and general punctuation are cut out of every range so that text a
 * system font already draws is drawn as before.
 *
 * A signature's own stack (`Arial,Helvetica,sans-serif`, src/render/schema.ts FONT_FAMILIES) names
 * none of these families, and a browser looks for a missing glyph in the stack, then in the
 * machine's fonts: so the page also gives every element with one of those stacks the same stack with
 * these families inserted before the generic family. The signature's fonts still come first; only a
 * character none of them has falls to these.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { FONT_FAMILIES } from './schema.ts';

interface FontSource {
  /** The package's stylesheet, as its `exports` names it. */
  css: string;
  /** The subsets kept, by the name in the comment above each face (`noto-sans-sc-[4]-wght-normal`). */
  subset: RegExp;
}

const NUMBERED = /^\[\d+\]$/;
const SOURCES: FontSource[] = [
  { css: '@fontsource-variable/noto-sans-arabic/wght.css', subset: /^arabic$/ },
  { css: '@fontsource-variable/noto-sans-hebrew/wght.css', subset: /^hebrew$/ },
  { css: '@fontsource-variable/noto-sans-devanagari/wght.css', subset: /^devanagari$/ },
  { css: '@fontsource-variable/noto-sans-sc/wght.css', subset: NUMBERED },
  { css: '@fontsource-variable/noto-sans-jp/wght.css', subset: NUMBERED },
  { css: '@fontsource-variable/noto-sans-kr/wght.css', subset: NUMBERED },
];

/**
 * Twemoji's font maps digits, `#`, `*`, ©, ® and ™ too (for keycaps and the like); those stay with
 * the text fonts. It gets the emoji blocks, the joiner, the keycap mark, variation selector 16 and
 * the tag characters of subdivision flags.
 */
const EMOJI = {
  family: "'Twemoji'",
  file: 'twemoji-colr-font/twemoji.woff2',
  ranges: [
    [0x200d, 0x200d],
    [0x20e3, 0x20e3],
    [0x2300, 0x23ff],
    [0x2600, 0x27bf],
    [0x2934, 0x2935],
    [0x2b05, 0x2b55],
    [0x3030, 0x3030],
    [0x303d, 0x303d],
    [0x3297, 0x3299],
    [0xfe0f, 0xfe0f],
    [0x1f000, 0x1faff],
    [0xe0020, 0xe007f],
  ] as [number, number][],
};

/** Cut from every face: Latin, and general punctuation except the joiners (ZWNJ, ZWJ) that shaping needs. */
const CUT_ALWAYS: [number, number][] = [
  [0x0000, 0x024f],
  [0x2000, 0x200b],
  [0x200e, 0x206f],
];

export interface PreviewFonts {
  /** `@font-face` rules with absolute file:// URLs, each with the code points it covers. */
  faces: { css: string; ranges: [number, number][] }[];
  /** The families, quoted, in the order a missing glyph is looked for. */
  families: string[];
}

let cached: PreviewFonts | undefined;

/** The preview's font faces, read once from the installed packages. */
export function previewFonts(): PreviewFonts {
  cached ??= load();
  return cached;
}

function load(): PreviewFonts {
  const require = createRequire(import.meta.url);
  const faces: PreviewFonts['faces'] = [];
  const families: string[] = [];
  for (const source of SOURCES) {
    const file = require.resolve(source.css);
    const css = fs.readFileSync(file, 'utf8');
    for (const m of css.matchAll(/\/\*\s*(\S+)\s*\*\/\s*@font-face\s*\{([^}]*)\}/g)) {
      const subset = subsetOf(m[1]!);
      if (!source.subset.test(subset)) continue;
      const body = m[2]!;
      const family = /font-family:\s*([^;]+);/.exec(body)?.[1]?.trim();
      const range = /unicode-range:\s*([^;]+);/.exec(body)?.[1];
      if (family === undefined || range === undefined) throw new Error(`${file}: a face without font-family or unicode-range (${m[1]})`);
      const kept = cutRanges(parseRanges(range), CUT_ALWAYS);
      if (kept.length === 0) continue;
      const rewritten = body
        .replace(/url\((?:'|")?\.\/([^)'"]+)(?:'|")?\)/g, (_, rel: string) => `url("${pathToFileURL(path.join(path.dirname(file), rel)).href}")`)
        .replace(/unicode-range:\s*[^;]+;/, `unicode-range: ${formatRanges(kept)};`)
        .replace(/font-display:\s*[^;]+;/, 'font-display: block;');
      faces.push({ css: `@font-face {${rewritten}}`, ranges: kept });
      if (!families.includes(family)) families.push(family);
    }
  }
  const emoji = pathToFileURL(require.resolve(EMOJI.file)).href;
  faces.push({
    css: `@font-face {\n  font-family: ${EMOJI.family};\n  font-display: block;\n  src: url("${emoji}") format('woff2');\n  unicode-range: ${formatRanges(EMOJI.ranges)};\n}`,
    ranges: EMOJI.ranges,
  });
  families.push(EMOJI.family);
  if (families.length !== SOURCES.length + 1) throw new Error(`preview fonts: expected ${SOURCES.length} families, found ${families.join(', ')}`);
  return { faces, families };
}

/** `noto-sans-sc-[4]-wght-normal` → `[4]`; `noto-sans-arabic-latin-ext-wght-normal` → `latin-ext`. */
function subsetOf(name: string): string {
  const bracket = /-(\[\d+\])-/.exec(name);
  if (bracket) return bracket[1]!;
  const m = /^noto-sans-[a-z]+-(.+)-(?:wght|\d+)-normal$/.exec(name);
  return m?.[1] ?? name;
}

function parseRanges(list: string): [number, number][] {
  return list.split(',').map((part) => {
    const m = /^\s*U\+([0-9a-f]+)(?:-([0-9a-f]+))?\s*$/i.exec(part);
    if (!m) throw new Error(`unicode-range: cannot read "${part}"`);
    const lo = parseInt(m[1]!, 16);
    return [lo, m[2] ? parseInt(m[2], 16) : lo];
  });
}

function cutRanges(ranges: [number, number][], cuts: [number, number][]): [number, number][] {
  let out = ranges;
  for (const [clo, chi] of cuts) {
    out = out.flatMap(([lo, hi]): [number, number][] => {
      if (hi < clo || lo > chi) return [[lo, hi]];
      const parts: [number, number][] = [];
      if (lo < clo) parts.push([lo, clo - 1]);
      if (hi > chi) parts.push([chi + 1, hi]);
      return parts;
    });
  }
  return out;
}

function formatRanges(ranges: [number, number][]): string {
  const hex = (n: number) => n.toString(16).toUpperCase();
  return ranges.map(([lo, hi]) => (lo === hi ? `U+${hex(lo)}` : `U+${hex(lo)}-${hex(hi)}`)).join(',');
}

/** `Arial,Helvetica,sans-serif` → `Arial,Helvetica,<the preview families>,sans-serif`. */
export function withFallbacks(stack: string, families = previewFonts().families): string {
  const parts = stack.split(',').map((s) => s.trim());
  const generic = /^(sans-serif|serif|monospace|cursive|fantasy|system-ui)$/.test(parts.at(-1) ?? '') ? parts.pop()! : 'sans-serif';
  return [...parts, ...families, generic].join(',');
}

/**
 * The stylesheet of the preview page: the faces that cover a character of `text` (the CJK fonts
 * come in about a hundred slices each; a page lists only those it uses), and each signature stack
 * (as the renderer writes it into a `style` attribute) with the fallbacks inserted. `!important`
 * because the stack is an inline style; descendants inherit the result.
 */
export function previewFontCss(scope: string, text: string): string {
  const points = new Set<number>();
  // The signature's HTML writes non-ASCII characters as numeric references (src/render/escape.ts).
  for (const m of text.matchAll(/&#(?:(\d+)|x([0-9a-f]+));/gi)) points.add(m[1] ? Number(m[1]) : parseInt(m[2]!, 16));
  for (const ch of text) points.add(ch.codePointAt(0)!);
  const used = previewFonts().faces.filter((f) => [...points].some((p) => f.ranges.some(([lo, hi]) => p >= lo && p <= hi)));
  const faces = used.map((f) => f.css).join('\n');
  const rules = Object.values(FONT_FAMILIES).map(
    (stack) => `${scope} [style*="font-family:${stack.replace(/"/g, '\\"')}"] { font-family: ${withFallbacks(stack)} !important; }`,
  );
  return `${faces}\n${rules.join('\n')}`;
}
