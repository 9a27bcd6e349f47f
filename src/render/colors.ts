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
  'aliceblue', 'antiquewhite', 'aqua', 'aquamarine', 'azure', 'beige', 'bisque', 'black', 'blanchedalmond', 'blue',
  'blueviolet', 'brown', 'burlywood', 'cadetblue', 'chartreuse', 'chocolate', 'coral', 'cornflowerblue', 'cornsilk',
  'crimson', 'cyan', 'darkblue', 'darkcyan', 'darkgoldenrod', 'darkgray', 'darkgreen', 'darkgrey', 'darkkhaki',
  'darkmagenta', 'darkolivegreen', 'darkorange', 'darkorchid', 'darkred', 'darksalmon', 'darkseagreen',
  'darkslateblue', 'darkslategray', 'darkslategrey', 'darkturquoise', 'darkviolet', 'deeppink', 'deepskyblue',
  'dimgray', 'dimgrey', 'dodgerblue', 'firebrick', 'floralwhite', 'forestgreen', 'fuchsia', 'gainsboro',
  'ghostwhite', 'gold', 'goldenrod', 'gray', 'green', 'greenyellow', 'grey', 'honeydew', 'hotpink', 'indianred',
  'indigo', 'ivory', 'khaki', 'lavender', 'lavenderblush', 'lawngreen', 'lemonchiffon', 'lightblue', 'lightcoral',
  'lightcyan', 'lightgoldenrodyellow', 'lightgray', 'lightgreen', 'lightgrey', 'lightpink', 'lightsalmon',
  'lightseagreen', 'lightskyblue', 'lightslategray', 'lightslategrey', 'lightsteelblue', 'lightyellow', 'lime',
  'limegreen', 'linen', 'magenta', 'maroon', 'mediumaquamarine', 'mediumblue', 'mediumorchid', 'mediumpurple',
  'mediumseagreen', 'mediumslateblue', 'mediumspringgreen', 'mediumturquoise', 'mediumvioletred', 'midnightblue',
  'mintcream', 'mistyrose', 'moccasin', 'navajowhite', 'navy', 'oldlace', 'olive', 'olivedrab', 'orange',
  'orangered', 'orchid', 'palegoldenrod', 'palegreen', 'paleturquoise', 'palevioletred', 'papayawhip',
  'peachpuff', 'peru', 'pink', 'plum', 'powderblue', 'purple', 'rebeccapurple', 'red', 'rosybrown', 'royalblue',
  'saddlebrown', 'salmon', 'sandybrown', 'seagreen', 'seashell', 'sienna', 'silver', 'skyblue', 'slateblue',
  'slategray', 'slategrey', 'snow', 'springgreen', 'steelblue', 'tan', 'teal', 'thistle', 'tomato', 'turquoise',
  'violet', 'wheat', 'white', 'whitesmoke', 'yellow', 'yellowgreen', 'transparent',
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
export const COLOR_FORMS = ['#rgb', '#rgba', '#rrggbb', '#rrggbbaa', 'rgb(r, g, b)', 'rgba(r, g, b, a)', 'hsl(h, s%, l%)', 'hsla(h, s%, l%, a)', 'a lowercase CSS named colour'];

export function isCssColor(value: string): boolean {
  return value.length <= 64 && COLOR_RE.test(value);
}
