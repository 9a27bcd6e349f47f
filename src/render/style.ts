/**
 * Text and box styles as inline CSS. Values were validated by the schema; they are checked again
 * here (colour pattern, finite numbers clamped to the documented limits) so that a tree that never
 * went through validation still cannot put anything but a colour or a number into a style attribute.
 */
import { colorDecl, isCssColor } from './colors.ts';
import { px } from './escape.ts';
import { DEFAULTS, FONT_FAMILIES, LIMITS, type BlockStyle, type FontFamily, type TextStyle } from './schema.ts';

/** A text style with every member decided. */
export interface ResolvedTextStyle {
  fontFamily: string;
  fontSize: number;
  lineHeightPx: number;
  color: string;
  bold: boolean;
  italic: boolean;
  underline: boolean;
}

function clamp(n: unknown, range: { minimum: number; maximum: number }, fallback: number): number {
  if (typeof n !== 'number' || !Number.isFinite(n)) return fallback;
  return Math.min(range.maximum, Math.max(range.minimum, n));
}

export function safeColor(c: unknown): string | undefined {
  return typeof c === 'string' && isCssColor(c) ? c : undefined;
}

/** Defaults merged with a token's own style (tokens do not inherit from each other). */
export function resolveTextStyle(s: TextStyle | undefined): ResolvedTextStyle {
  const fontSize = clamp(s?.fontSize, LIMITS.fontSize, DEFAULTS.fontSize);
  const lineHeight = clamp(s?.lineHeight, LIMITS.lineHeight, DEFAULTS.lineHeight);
  const family = s?.fontFamily && Object.hasOwn(FONT_FAMILIES, s.fontFamily) ? s.fontFamily : DEFAULTS.fontFamily;
  return {
    fontFamily: FONT_FAMILIES[family as FontFamily],
    fontSize,
    lineHeightPx: Math.round(fontSize * lineHeight),
    color: safeColor(s?.color) ?? DEFAULTS.color,
    bold: s?.fontWeight === 'bold',
    italic: s?.fontStyle === 'italic',
    underline: s?.textDecoration === 'underline',
  };
}

/**
 * A line height in px. Outlook for Windows treats a px line height as a minimum unless told
 * `mso-line-height-rule:exactly` first (other clients ignore the `mso-` property), so the rule
 * always comes with it: a line is as tall in Outlook as everywhere else.
 */
export function lineHeightCss(lineHeightPx: number): string {
  return `mso-line-height-rule:exactly;line-height:${lineHeightPx}px`;
}

/**
 * Every inherited member, for a cell that sets the style its tokens inherit. Never a decoration:
 * one on a cell underlines everything inside it, whatever the children say (lines.ts cellStyleOf).
 *
 * A cell that holds an image gets no line height: Outlook for Windows cuts whatever stands above an
 * exact line height (a 40 px logo in a 20 px line shows its bottom 20 px), and the image's height
 * is not known when the template compiles. Its text lines are as tall as the font's normal height.
 */
export function fullTextCss(s: ResolvedTextStyle, holdsImage = false): string {
  let css = `font-family:${s.fontFamily};font-size:${px(s.fontSize)};${holdsImage ? '' : `${lineHeightCss(s.lineHeightPx)};`}${colorDecl('color', s.color)}`;
  if (s.bold) css += ';font-weight:bold';
  if (s.italic) css += ';font-style:italic';
  return css;
}

/** Only the members of `s` that differ from the cell's, for a span inside it ('' when none). */
export function diffTextCss(s: ResolvedTextStyle, cell: ResolvedTextStyle): string {
  const parts: string[] = [];
  if (s.fontFamily !== cell.fontFamily) parts.push(`font-family:${s.fontFamily}`);
  if (s.fontSize !== cell.fontSize) parts.push(`font-size:${px(s.fontSize)}`);
  if (s.lineHeightPx !== cell.lineHeightPx) parts.push(lineHeightCss(s.lineHeightPx));
  if (s.color !== cell.color) parts.push(colorDecl('color', s.color));
  if (s.bold !== cell.bold) parts.push(`font-weight:${s.bold ? 'bold' : 'normal'}`);
  if (s.italic !== cell.italic) parts.push(`font-style:${s.italic ? 'italic' : 'normal'}`);
  if (s.underline !== cell.underline) parts.push(`text-decoration:${s.underline ? 'underline' : 'none'}`);
  return parts.join(';');
}

/**
 * A link's style: mail clients paint links blue and underlined unless told otherwise, so colour and
 * decoration are always stated; other members only where they differ from the cell.
 */
export function linkTextCss(s: ResolvedTextStyle, cell: ResolvedTextStyle): string {
  const diff = diffTextCss({ ...s, color: cell.color, underline: cell.underline }, cell);
  const own = `${colorDecl('color', s.color)};text-decoration:${s.underline ? 'underline' : 'none'}`;
  return diff ? `${diff};${own}` : own;
}

export interface Box {
  margin: [number, number, number, number];
  padding: [number, number, number, number];
  background: string | undefined;
  width: number | undefined;
  gap: number;
}

export function resolveBox(b: BlockStyle | undefined, defaultGap = 0): Box {
  const sp = (n: unknown) => clamp(n, LIMITS.spacing, 0);
  return {
    margin: [sp(b?.marginTop), sp(b?.marginRight), sp(b?.marginBottom), sp(b?.marginLeft)],
    padding: [sp(b?.paddingTop), sp(b?.paddingRight), sp(b?.paddingBottom), sp(b?.paddingLeft)],
    background: safeColor(b?.backgroundColor),
    width: b?.width === undefined ? undefined : clamp(b.width, LIMITS.width, LIMITS.width.maximum),
    gap: b?.gap === undefined ? defaultGap : sp(b.gap),
  };
}

/** `padding:1px 2px 3px 4px`, or '' when all four are 0. */
export function paddingCss(p: readonly [number, number, number, number]): string {
  if (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0) return '';
  return `padding:${px(p[0])} ${px(p[1])} ${px(p[2])} ${px(p[3])}`;
}

export function hasMargin(box: Box): boolean {
  return box.margin[0] !== 0 || box.margin[1] !== 0 || box.margin[2] !== 0 || box.margin[3] !== 0;
}

export function joinCss(...parts: string[]): string {
  return parts.filter(Boolean).join(';');
}
