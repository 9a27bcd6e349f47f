/**
 * Blocks of a compiled template: stacks, text, lists and social lists laid out as nested tables.
 * See compile.ts (Layout).
 */
import { escapeAttr, escapeText, px } from './escape.ts';
import { cleanLiteral } from '../text.ts';
import { colorDecl, emailColor } from './colors.ts';
import { SOCIAL_ICONS, SOCIAL_NETWORK_NAMES, type SocialNetwork } from './social.ts';
import { type Block, DEFAULTS, type ListBlock, type ListItemBlock, type OptOutBlock, type SocialListBlock, type StackBlock, type TextBlock } from './schema.ts';
import { type Box, fullTextCss, hasMargin, joinCss, paddingCss, resolveBox, type ResolvedTextStyle, resolveTextStyle } from './style.ts';
import type { Slots } from './program.ts';
import { type Env, SIGNATURE_MAX_WIDTH, TABLE_CLOSE, TABLE_OPEN } from './program.ts';
import { CompiledHref, shownUrl } from './links.ts';
import type { Line } from './lines.ts';
import { cellStyleOf, compileTokens, spanFor } from './lines.ts';

export interface CBlock {
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

/**
 * Opening and closing of the cell(s) a block renders into.
 *
 * - A background is stated twice: `bgcolor` for clients that draw HTML attributes before CSS, and
 *   `background-color` (see colors.ts for see-through colours).
 * - Outlook for Windows gives every cell of a table row the largest vertical padding of that row.
 *   In a horizontal stack the children are cells of one row, so a child with vertical padding or
 *   margins keeps them in a one-cell table of its own inside its row's cell.
 * - A width is the width of the box, padding included. A cell's width leaves its padding out in
 *   browser engines (a 420 px cell with 12 px padding each side is 444 px wide), so a box with a
 *   width and padding on its sides is a table of that width holding the padded cell: a table's
 *   width includes its cells' padding in every engine, Word's included.
 */
function cellFrame(box: Box, ctx: SlotContext, extraCss = ''): { open: string; close: string } {
  const valignAttr = ctx.valign ? ` valign="${ctx.valign}"` : '';
  const valignCss = ctx.valign ? `vertical-align:${ctx.valign}` : '';
  const sidePadded = box.width !== undefined && (box.padding[1] !== 0 || box.padding[3] !== 0);
  const cellWidth = sidePadded ? undefined : box.width;
  const widthAttr = cellWidth !== undefined ? ` width="${Math.round(cellWidth)}"` : '';
  const bg = box.background ? emailColor(box.background) : undefined;
  const bgAttr = bg?.attr ? ` bgcolor="${escapeAttr(bg.attr)}"` : '';
  const inner = joinCss(
    paddingCss(box.padding),
    box.background ? colorDecl('background-color', box.background) : '',
    cellWidth !== undefined ? `width:${px(cellWidth)}` : '',
    extraCss,
  );
  const padded = `<td${widthAttr}${bgAttr}${inner ? ` style="${escapeAttr(inner)}"` : ''}>`;
  // For a side-padded box of fixed width: the table of that width around the padded cell, to sit in a cell.
  const fixed = sidePadded
    ? { open: `${TABLE_OPEN.slice(0, -1)} width="${Math.round(box.width!)}" style="width:${px(box.width!)}"><tr>${padded}`, close: `</td></tr>${TABLE_CLOSE}` }
    : undefined;
  const innerOpen = fixed ? `<td>${fixed.open}` : padded;
  const innerClose = fixed ? `${fixed.close}</td>` : '</td>';
  const vertical = box.padding[0] !== 0 || box.padding[2] !== 0 || box.margin[0] !== 0 || box.margin[2] !== 0;
  if (ctx.valign && vertical) {
    const margin = hasMargin(box) ? `<td style="${escapeAttr(paddingCss(box.margin))}">${TABLE_OPEN}<tr>` : '';
    return {
      open: `<td${valignAttr} style="${valignCss}">${TABLE_OPEN}<tr>${margin}${innerOpen}`,
      close: `${innerClose}</tr>${TABLE_CLOSE}${margin ? `</td></tr>${TABLE_CLOSE}` : ''}</td>`,
    };
  }
  if (!hasMargin(box)) {
    if (fixed) return { open: `<td${valignAttr}${valignCss ? ` style="${valignCss}"` : ''}>${fixed.open}`, close: `${fixed.close}</td>` };
    const css = joinCss(inner, valignCss);
    return { open: `<td${widthAttr}${valignAttr}${bgAttr}${css ? ` style="${escapeAttr(css)}"` : ''}>`, close: '</td>' };
  }
  const outer = joinCss(paddingCss(box.margin), valignCss);
  return {
    open: `<td${valignAttr} style="${escapeAttr(outer)}">${TABLE_OPEN}<tr>${innerOpen}`,
    close: `${innerClose}</tr>${TABLE_CLOSE}</td>`,
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
    ({ open: this.open, close: this.close } = cellFrame(box, ctx, fullTextCss(cell, this.line.hasImage)));
    if (this.line.fixedHtml !== undefined) {
      this.fixed = this.open + this.line.fixedHtml + this.close;
      this.fixedText = this.line.fixedText;
    }
  }

  slot(env: Env): string {
    if (this.fixed !== undefined && (env.link === undefined || !this.line.linked)) {
      if (this.fixedText) env.lines.push(this.fixedText);
      return this.fixed;
    }
    const h = this.line.render(env, true);
    if (h === null) return '';
    if (env.text) env.lines.push(env.text);
    return this.open + h + this.close;
  }
}

/**
 * The workspace's opt-out link on a line of its own: a text line whose one token links to a
 * placeholder that the render replaces with the link it is given (`env.optOutUrl`), untracked (the
 * tracked `link` is not asked). Without a link, as in a render that does not know the workspace's,
 * the block is left out.
 */
class OptOutNode implements CBlock {
  private static readonly PLACEHOLDER = 'https://opt-out.invalid/';
  private readonly line: TextNode;

  constructor(b: OptOutBlock, ctx: SlotContext, slots: Slots) {
    const token = { type: 'textToken' as const, value: b.text ?? DEFAULTS.optOutText, textStyle: b.textStyle, href: { text: OptOutNode.PLACEHOLDER } };
    this.line = new TextNode({ type: 'text', blockStyle: b.blockStyle, tokens: [token] }, ctx, slots);
  }

  slot(env: Env): string {
    const url = env.optOutUrl;
    if (!url) return '';
    const own: Env = { ...env, link: () => url };
    const html = this.line.slot(own);
    env.text = own.text;
    return html;
  }
}

/** A spacer row: the height attribute for Outlook, font-size = line-height = gap for everyone else. */
function spacerRow(gap: number): string {
  return `<tr><td height="${Math.round(gap)}" style="font-size:${px(gap)};mso-line-height-rule:exactly;line-height:${px(gap)}">&nbsp;</td></tr>`;
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
    ({ open: this.open, close: this.close } = cellFrame(box, ctx, empty ? 'font-size:0;mso-line-height-rule:exactly;line-height:0' : ''));
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

  constructor(b: ListItemBlock, cell: ResolvedTextStyle, slots: Slots, frame?: Box) {
    this.label = b.label && b.label.visible !== false ? compileTokens(b.label.tokens, cell, slots, DEFAULTS.imageWidth) : undefined;
    this.value = compileTokens(b.tokens, cell, slots, DEFAULTS.imageWidth);
    ({ open: this.open, close: this.close } = frame ? cellFrame(frame, {}, fullTextCss(cell, this.hasImage)) : { open: '', close: '' });
  }

  get hasImage(): boolean {
    return this.value.hasImage || this.label?.hasImage === true;
  }

  /** HTML of the item, or null when it is dropped; its text is left in `env.text`. The label is written before the value, as it reads. */
  render(env: Env): string | null {
    if (!this.value.prepare(env, true)) return null;
    if (!this.label) return this.value.write(env);
    const l = this.label.render(env, false);
    const labelText = env.text;
    const v = this.value.write(env);
    env.text = (l === null ? '' : labelText) + env.text;
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
      return new ItemNode(c, cell, slots, this.vertical ? resolveBox(c.blockStyle) : undefined);
    });
    this.spacer = this.vertical && box.gap > 0 ? spacerRow(box.gap) : '';
    this.separatorText = cleanLiteral(b.separator ?? DEFAULTS.separator);
    this.separatorHtml = spanFor(b.separatorStyle ? resolveTextStyle(b.separatorStyle) : listCell, listCell, escapeText(this.separatorText));
    ({ open: this.open, close: this.close } = cellFrame(
      box,
      ctx,
      this.vertical
        ? ''
        : fullTextCss(
            listCell,
            this.items.some((i) => i.hasImage),
          ),
    ));
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
  /** What follows the href: the icon and the closing tags. */
  readonly tail: string;
  private readonly icon: string;
  private readonly afterIcon: string;

  constructor(network: SocialNetwork, href: CompiledHref, size: number) {
    this.href = href;
    this.name = SOCIAL_NETWORK_NAMES[network];
    this.icon = SOCIAL_ICONS[network];
    const s = Math.round(size);
    this.afterIcon = `" width="${s}" height="${s}" alt="${escapeAttr(this.name)}" style="display:block;border:0;width:${s}px"></a></td>`;
    this.tail = `"><img src="${escapeAttr(this.icon)}${this.afterIcon}`;
  }

  /** The tail with the icon's src as the render writes it (the render's `image`). */
  tailFor(image: (src: string) => string): string {
    return `"><img src="${escapeAttr(image(this.icon))}${this.afterIcon}`;
  }
}

/**
 * Social icons in rows: as many icons (and gaps) as fit in the list's width (its box's, else
 * SIGNATURE_MAX_WIDTH) per row, the rows `gap` apart. One row is one table row, as always; several
 * are one table each, so that a short last row keeps the icons' spacing.
 */
class SocialListNode implements CBlock {
  private readonly items: SocialItem[];
  private readonly spacer: string;
  private readonly rowSpacer: string;
  private readonly perRow: number;
  private readonly open: string;
  private readonly close: string;

  constructor(b: SocialListBlock, ctx: SlotContext, slots: Slots) {
    const box = resolveBox(b.blockStyle, 6);
    const size = Math.round(b.iconSize ?? DEFAULTS.iconSize);
    this.items = b.children
      .filter((c) => c.visible !== false && Object.hasOwn(SOCIAL_ICONS, c.network))
      .map((c) => new SocialItem(c.network, new CompiledHref(c.href, slots), size));
    this.spacer = box.gap > 0 ? spacerCell(box.gap) : '';
    this.rowSpacer = box.gap > 0 ? spacerRow(box.gap) : '';
    const width = (box.width ?? SIGNATURE_MAX_WIDTH) - box.padding[1] - box.padding[3];
    this.perRow = Math.max(1, Math.floor((width + box.gap) / (size + box.gap)));
    ({ open: this.open, close: this.close } = cellFrame(box, ctx));
  }

  get isEmpty(): boolean {
    return this.items.length === 0;
  }

  slot(env: Env): string {
    const rows: string[] = [];
    let cells = '';
    let n = 0;
    for (const item of this.items) {
      const url = item.href.empty(env) ? null : item.href.url(env);
      if (url === null) continue;
      if (n === this.perRow) {
        rows.push(cells);
        cells = '';
        n = 0;
      }
      if (n > 0) cells += this.spacer;
      cells += `<td><a href="${escapeAttr(shownUrl(env, url))}${env.image === undefined ? item.tail : item.tailFor(env.image)}`;
      // The plain text names the network's own address: `Name: url` is not a `label (url)` link text.
      env.lines.push(`${item.name}: ${url}`);
      n++;
    }
    if (n === 0) return '';
    if (rows.length === 0) return `${this.open}${TABLE_OPEN}<tr>${cells}</tr>${TABLE_CLOSE}${this.close}`;
    rows.push(cells);
    const body = rows.map((r) => `<tr><td>${TABLE_OPEN}<tr>${r}</tr>${TABLE_CLOSE}</td></tr>`).join(this.rowSpacer);
    return `${this.open}${TABLE_OPEN}${body}${TABLE_CLOSE}${this.close}`;
  }
}

export function compileBlock(b: Block, ctx: SlotContext, slots: Slots): CBlock | null {
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
    case 'optOut':
      node = new OptOutNode(b, ctx, slots);
      break;
    default:
      // Item blocks only appear inside their lists; the schema rejects them elsewhere.
      return null;
  }
  return node.isEmpty ? null : node;
}
