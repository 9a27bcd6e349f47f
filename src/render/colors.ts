/**
 * CSS colours accepted in signature content: `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()`
 * and `hsl()`/`hsla()` in the comma syntax, and the CSS named colours (lowercase) plus `transparent`.
 *
 * One regular expression decides, so the JSON Schema that GET /v1/content_schema serves carries the
 * same rule as its `pattern`. JSON Schema patterns have no flags, hence lowercase names only; hex
 * digits may be either case.
 */

/** The CSS Color Module Level 4 named colours. */
export const NAMED_COLORS = [
  'aliceblue',
  'antiquewhite',
  'aqua',
  'aquamarine',
  'azure',
  'beige',
  'bisque',
  'black',
  'blanchedalmond',
  'blue',
  'blueviolet',
  'brown',
  'burlywood',
  'cadetblue',
  'chartreuse',
  'chocolate',
  'coral',
  'cornflowerblue',
  'cornsilk',
  'crimson',
  'cyan',
  'darkblue',
  'darkcyan',
  'darkgoldenrod',
  'darkgray',
  'darkgreen',
  'darkgrey',
  'darkkhaki',
  'darkmagenta',
  'darkolivegreen',
  'darkorange',
  'darkorchid',
  'darkred',
  'darksalmon',
  'darkseagreen',
  'darkslateblue',
  'darkslategray',
  'darkslategrey',
  'darkturquoise',
  'darkviolet',
  'deeppink',
  'deepskyblue',
  'dimgray',
  'dimgrey',
  'dodgerblue',
  'firebrick',
  'floralwhite',
  'forestgreen',
  'fuchsia',
  'gainsboro',
  'ghostwhite',
  'gold',
  'goldenrod',
  'gray',
  'green',
  'greenyellow',
  'grey',
  'honeydew',
  'hotpink',
  'indianred',
  'indigo',
  'ivory',
  'khaki',
  'lavender',
  'lavenderblush',
  'lawngreen',
  'lemonchiffon',
  'lightblue',
  'lightcoral',
  'lightcyan',
  'lightgoldenrodyellow',
  'lightgray',
  'lightgreen',
  'lightgrey',
  'lightpink',
  'lightsalmon',
  'lightseagreen',
  'lightskyblue',
  'lightslategray',
  'lightslategrey',
  'lightsteelblue',
  'lightyellow',
  'lime',
  'limegreen',
  'linen',
  'magenta',
  'maroon',
  'mediumaquamarine',
  'mediumblue',
  'mediumorchid',
  'mediumpurple',
  'mediumseagreen',
  'mediumslateblue',
  'mediumspringgreen',
  'mediumturquoise',
  'mediumvioletred',
  'midnightblue',
  'mintcream',
  'mistyrose',
  'moccasin',
  'navajowhite',
  'navy',
  'oldlace',
  'olive',
  'olivedrab',
  'orange',
  'orangered',
  'orchid',
  'palegoldenrod',
  'palegreen',
  'paleturquoise',
  'palevioletred',
  'papayawhip',
  'peachpuff',
  'peru',
  'pink',
  'plum',
  'powderblue',
  'purple',
  'rebeccapurple',
  'red',
  'rosybrown',
  'royalblue',
  'saddlebrown',
  'salmon',
  'sandybrown',
  'seagreen',
  'seashell',
  'sienna',
  'silver',
  'skyblue',
  'slateblue',
  'slategray',
  'slategrey',
  'snow',
  'springgreen',
  'steelblue',
  'tan',
  'teal',
  'thistle',
  'tomato',
  'turquoise',
  'violet',
  'wheat',
  'white',
  'whitesmoke',
  'yellow',
  'yellowgreen',
  'transparent',
] as const;

const HEX = '#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})';
const NUM = '(?:\\d{1,3}(?:\\.\\d+)?%?)';
const ALPHA = '(?:0|1|0?\\.\\d+|\\d{1,3}%)';
const RGB = `rgba?\\( *${NUM} *, *${NUM} *, *${NUM} *(?:, *${ALPHA} *)?\\)`;
const HUE = '(?:\\d{1,3}(?:\\.\\d+)?(?:deg)?)';
const PCT = '(?:\\d{1,3}(?:\\.\\d+)?%)';
const HSL = `hsla?\\( *${HUE} *, *${PCT} *, *${PCT} *(?:, *${ALPHA} *)?\\)`;

/** The colour rule as a pattern string (anchored), also used in the JSON Schema. */
export const COLOR_PATTERN = `^(?:${HEX}|${RGB}|${HSL}|${NAMED_COLORS.join('|')})$`;

export const COLOR_RE = new RegExp(COLOR_PATTERN);

/** The accepted forms, as listed in validation errors (`allowed`). */
export const COLOR_FORMS = [
  '#rgb',
  '#rgba',
  '#rrggbb',
  '#rrggbbaa',
  'rgb(r, g, b)',
  'rgba(r, g, b, a)',
  'hsl(h, s%, l%)',
  'hsla(h, s%, l%, a)',
  'a lowercase CSS named colour',
];

export function isCssColor(value: string): boolean {
  return value.length <= 64 && COLOR_RE.test(value);
}

/**
 * A colour as mail clients can show it. Opaque colours written as `rgb()`, `hsl()` or hex with a
 * full alpha become `#rrggbb` (Gmail and Outlook for Windows support `rgb()` only partly, and
 * `hsl()` is not in every client's CSS); `#rgb`, `#rrggbb` and named colours stay as written. A
 * see-through colour becomes `rgba(r,g,b,a)` in the comma syntax, with `fallback`: the same colour
 * laid on white as `#rrggbb`, written first so that a client that cannot read `rgba()` (Outlook for
 * Windows) keeps a solid colour close to the design instead of none.
 */
export interface EmailColor {
  css: string;
  /** For see-through colours: the solid colour on white, for clients without `rgba()`. */
  fallback?: string;
  /** A value for the `bgcolor` attribute (hex or a named colour), when there is one. */
  attr?: string;
}

const HEX_RE = /^#([0-9a-fA-F]{3,8})$/;
const FUNC_RE = /^(rgba?|hsla?)\(([^)]*)\)$/;

function hex2(n: number): string {
  return Math.round(Math.min(255, Math.max(0, n)))
    .toString(16)
    .padStart(2, '0');
}

function parseAlpha(s: string | undefined): number {
  if (s === undefined) return 1;
  const v = s.endsWith('%') ? Number(s.slice(0, -1)) / 100 : Number(s);
  return Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 1;
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const hue = ((h % 360) + 360) % 360;
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const x = c * (1 - Math.abs(((hue / 60) % 2) - 1));
  const m = l - c / 2;
  const [r, g, b] = hue < 60 ? [c, x, 0] : hue < 120 ? [x, c, 0] : hue < 180 ? [0, c, x] : hue < 240 ? [0, x, c] : hue < 300 ? [x, 0, c] : [c, 0, x];
  return [(r + m) * 255, (g + m) * 255, (b + m) * 255];
}

/** Red, green, blue (0–255) and alpha (0–1) of a colour accepted by `isCssColor`, or undefined for a named colour. */
export function colorChannels(value: string): [number, number, number, number] | undefined {
  const hex = HEX_RE.exec(value);
  if (hex) {
    let h = hex[1]!;
    if (h.length <= 4) h = [...h].map((d) => d + d).join('');
    const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
    return [n(0), n(2), n(4), h.length === 8 ? n(6) / 255 : 1];
  }
  const fn = FUNC_RE.exec(value);
  if (!fn) return undefined;
  const parts = fn[2]!.split(',').map((p) => p.trim());
  if (fn[1]!.startsWith('rgb')) {
    const ch = (p: string) => (p.endsWith('%') ? (Number(p.slice(0, -1)) * 255) / 100 : Number(p));
    return [ch(parts[0]!), ch(parts[1]!), ch(parts[2]!), parseAlpha(parts[3])];
  }
  const [r, g, b] = hslToRgb(Number(parts[0]!.replace('deg', '')), Number(parts[1]!.slice(0, -1)) / 100, Number(parts[2]!.slice(0, -1)) / 100);
  return [r, g, b, parseAlpha(parts[3])];
}

const emailColors = new Map<string, EmailColor>();

/** The email-safe form of a colour accepted by `isCssColor` (see EmailColor). */
export function emailColor(value: string): EmailColor {
  let out = emailColors.get(value);
  if (out) return out;
  const ch = colorChannels(value);
  if (!ch) out = value === 'transparent' ? { css: value } : { css: value, attr: value };
  else if (HEX_RE.test(value) && (value.length === 4 || value.length === 7)) out = { css: value, attr: value };
  else {
    const [r, g, b, a] = ch;
    const solid = `#${hex2(r)}${hex2(g)}${hex2(b)}`;
    if (a >= 1) out = { css: solid, attr: solid };
    else {
      const onWhite = (c: number) => c * a + 255 * (1 - a);
      const fallback = `#${hex2(onWhite(r))}${hex2(onWhite(g))}${hex2(onWhite(b))}`;
      out = { css: `rgba(${Math.round(r)},${Math.round(g)},${Math.round(b)},${Math.round(a * 1000) / 1000})`, fallback, attr: fallback };
    }
  }
  if (emailColors.size < 10_000) emailColors.set(value, out);
  return out;
}

/** `prop:colour`, preceded by the solid fallback for a see-through colour. */
export function colorDecl(prop: string, value: string): string {
  const c = emailColor(value);
  return c.fallback ? `${prop}:${c.fallback};${prop}:${c.css}` : `${prop}:${c.css}`;
}
