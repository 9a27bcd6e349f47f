/**
 * The mail clients the renderer's output is checked in, and the recorded exceptions: what
 * caniemail.com's data reports for the output that does not change how a signature looks, or that
 * a reader sees differently (`shows`), each with its reason. The check is in compatibility.ts.
 */

export const CLIENTS = [
  { id: 'gmail.desktop-webmail', name: 'Gmail on the web', family: 'gmail' },
  { id: 'gmail.ios', name: 'Gmail for iPhone and iPad', family: 'gmail' },
  { id: 'gmail.android', name: 'Gmail for Android', family: 'gmail' },
  { id: 'outlook.windows', name: 'Outlook for Windows', family: 'outlook' },
  { id: 'outlook.macos', name: 'Outlook for Mac', family: 'outlook' },
  { id: 'outlook.outlook-com', name: 'Outlook on the web', family: 'outlook' },
  { id: 'outlook.ios', name: 'Outlook for iPhone and iPad', family: 'outlook' },
  { id: 'outlook.android', name: 'Outlook for Android', family: 'outlook' },
  { id: 'apple-mail.macos', name: 'Apple Mail on the Mac', family: 'apple-mail' },
  { id: 'apple-mail.ios', name: 'Apple Mail on iPhone and iPad', family: 'apple-mail' },
  { id: 'yahoo.desktop-webmail', name: 'Yahoo Mail on the web', family: 'yahoo' },
  { id: 'yahoo.ios', name: 'Yahoo Mail for iPhone and iPad', family: 'yahoo' },
  { id: 'yahoo.android', name: 'Yahoo Mail for Android', family: 'yahoo' },
] as const;

export type ClientId = (typeof CLIENTS)[number]['id'];
export type ClientFamily = (typeof CLIENTS)[number]['family'];
export const CLIENT_IDS: readonly ClientId[] = CLIENTS.map((c) => c.id);
const CLIENT_NAMES = new Map<string, string>(CLIENTS.map((c) => [c.id, c.name]));

export function clientName(id: string): string {
  return CLIENT_NAMES.get(id) ?? id;
}

/** The clients of the given families (`gmail`, `outlook`, ...), in CLIENTS order; all of them for none. */
export function clientsOf(families: readonly ClientFamily[]): ClientId[] {
  return families.length === 0 ? [...CLIENT_IDS] : CLIENTS.filter((c) => families.includes(c.family)).map((c) => c.id);
}

export type Part = 'signature' | 'banner';

export interface Declaration {
  property: string;
  value: string;
}

/** One element, attribute or CSS declaration of the HTML. */
export interface Usage {
  kind: 'element' | 'attribute' | 'css';
  tag: string;
  /** The attribute or CSS property ('' for the element itself). */
  name: string;
  value: string;
  attrs: Readonly<Record<string, string>>;
  /** The element's style declarations in order (a property may repeat: colour fallbacks). */
  style: readonly Declaration[];
  /** Index of this declaration in `style` (css usages). */
  index: number;
  part: Part;
  /** For a table cell: the cells of its row differ in vertical padding. */
  rowPaddingDiffers: boolean;
  /** The element's line height is the one an image inside it stands in (the nearest to the image). */
  holdsImage: boolean;
}

export type Support = 'none' | 'partial' | 'unknown';

export interface Exception {
  id: string;
  clients: readonly ClientId[];
  /** caniemail's feature title (or titles). */
  title: string | readonly string[];
  /** Whether this usage is the one the exception is about. */
  applies(u: Usage): boolean;
  /** Why the output is left as it is (for people reading the code and docs/rendering.md). */
  reason: string;
  /** What the reader sees instead, in plain words, when it differs from the design; absent when it does not. */
  shows?: (u: Usage) => string;
}

export interface Finding {
  client: ClientId;
  title: string;
  support: Support;
  notes: string[];
  usage: Usage;
  exception: Exception | undefined;
}

const ALL_GMAIL_APPS: readonly ClientId[] = ['gmail.ios', 'gmail.android'];
const YAHOO: readonly ClientId[] = ['yahoo.desktop-webmail', 'yahoo.ios', 'yahoo.android'];
const PX = /^(?:0|\d+(?:\.\d+)?px)$/;

export function partWords(u: Usage): string {
  return u.part === 'banner' ? 'the campaign banner' : 'the signature';
}

function priorSolid(u: Usage): string | undefined {
  for (let i = u.index - 1; i >= 0; i--) {
    const d = u.style[i]!;
    if (d.property === u.name) return /^#[0-9a-f]{6}$/i.test(d.value) ? d.value : undefined;
  }
  return undefined;
}

/**
 * Findings the renderer's output is known to cause, each with why it is left as it is. An entry
 * covers one feature for some clients, and only the usages `applies` accepts: the same feature used
 * another way is a new finding.
 */
export const EXCEPTIONS: readonly Exception[] = [
  {
    id: 'line-height-exactly',
    clients: ['outlook.windows'],
    title: 'line-height',
    applies: (u) =>
      u.kind === 'css' &&
      PX.test(u.value) &&
      !u.holdsImage &&
      u.style.slice(0, u.index).some((d) => d.property === 'mso-line-height-rule' && d.value === 'exactly'),
    reason:
      'Outlook for Windows treats a px line height as a minimum unless `mso-line-height-rule:exactly` comes first; the renderer always writes it first. Never where an image stands in the line: Outlook cuts the image to the line height, so an exact line height there is a finding.',
  },
  {
    id: 'padding-on-cells',
    clients: ['outlook.windows'],
    title: 'padding',
    applies: (u) => u.kind === 'css' && u.tag === 'td' && !u.rowPaddingDiffers,
    reason:
      'Padding is only ever on table cells, and no row has cells of different vertical padding (a horizontal stack puts vertical padding in a table of its own), so Outlook for Windows has nothing to equalise.',
  },
  {
    id: 'px-font-size',
    clients: ['outlook.windows', ...YAHOO],
    title: 'font-size',
    applies: (u) => u.kind === 'css' && PX.test(u.value),
    reason: 'The partial support is about `rem` units; font sizes are written in px.',
  },
  {
    id: 'keyword-font-weight',
    clients: ['outlook.windows', ...YAHOO],
    title: 'font-weight',
    applies: (u) => u.kind === 'css' && (u.value === 'bold' || u.value === 'normal'),
    reason: 'The partial support is about numeric weights; only `bold` and `normal` are written.',
  },
  {
    id: 'single-text-decoration',
    clients: ['outlook.windows'],
    title: 'text-decoration',
    applies: (u) => u.kind === 'css' && (u.value === 'none' || u.value === 'underline'),
    reason: 'Outlook for Windows lacks several values at once and `overline`; only `none` or `underline` is written.',
  },
  {
    id: 'gmail-apps-other-accounts',
    clients: ALL_GMAIL_APPS,
    title: 'text-decoration',
    applies: (u) => u.kind === 'css' && (u.value === 'none' || u.value === 'underline'),
    reason:
      'The Gmail apps ignore text-decoration only when they show a mailbox that is not a Google account, and then draw their own: links underlined, other text not. Nothing else says "no underline" to a mail client.',
    // One rule, one message: only where the app's own drawing differs from the design (a link set
    // to no underline, other text set to underline); a link set to underline shows as designed.
    shows: (u) =>
      (u.tag === 'a') === (u.value === 'none')
        ? `when the reader's mailbox is not a Google account, the underlines of ${partWords(u)} follow the app instead of the design: links are underlined, other text is not`
        : '',
  },
  {
    id: 'display-block',
    clients: [...ALL_GMAIL_APPS, ...YAHOO],
    title: 'display',
    applies: (u) => u.kind === 'css' && u.value === 'block',
    reason: 'The values these clients lack are flex, grid and the like; only `display:block` is written (on images).',
  },
  {
    id: 'display-block-outlook',
    clients: ['outlook.windows'],
    title: 'display',
    applies: (u) => u.kind === 'css' && u.tag === 'img' && u.value === 'block',
    reason: 'display:block on an image removes the gap under it in browser engines; Word, which Outlook for Windows draws with, leaves no such gap.',
  },
  {
    id: 'border-zero',
    clients: ['outlook.windows'],
    title: 'border',
    applies: (u) => u.kind === 'css' && u.tag === 'img' && u.value === '0',
    reason: 'The limits are borders over 8px and borders on p or div; the only border written is `border:0` on images.',
  },
  {
    id: 'size-attributes',
    clients: ['outlook.windows'],
    title: ['width attribute', 'height attribute'],
    applies: (u) => u.kind === 'attribute' && /^\d+$/.test(u.value),
    reason:
      'Sizes are whole pixels (the percentage bug does not apply). At 120 dpi Outlook for Windows does not scale them: invisible for spacer cells of a few pixels, visible for images, which is reported.',
    shows: (u) => (u.tag === 'img' ? `on screens scaled above 100%, the images of ${partWords(u)} are not enlarged with the text, so they look smaller` : ''),
  },
  {
    id: 'width-beside-attribute',
    clients: ['outlook.windows'],
    title: 'width property',
    applies: (u) =>
      u.kind === 'css' && (u.tag === 'td' || ((u.tag === 'img' || u.tag === 'table') && u.attrs.width !== undefined && `${u.attrs.width}px` === u.value)),
    reason:
      'On cells Outlook for Windows supports width; on images and tables it does not, and every image or table with a width carries the same width as an attribute, which it uses.',
  },
  {
    id: 'max-width-outer-table',
    clients: ['outlook.windows'],
    title: 'max-width',
    applies: (u) => u.kind === 'css' && u.tag === 'table' && u.index === 0 && PX.test(u.value),
    reason:
      "Only the signature's outer table has a max-width, so that a long value wraps instead of widening it. Word ignores it and lays a table out as wide as its content, up to the reading pane, where it wraps the text: the signature is only ever wider than designed for a value longer than the line.",
  },
  {
    id: 'word-break-break-word',
    clients: [...ALL_GMAIL_APPS, 'outlook.macos', 'outlook.outlook-com', 'outlook.ios', 'outlook.android', 'apple-mail.macos', 'apple-mail.ios'],
    title: 'word-break',
    applies: (u) => u.kind === 'css' && u.tag === 'table' && u.value === 'break-word',
    reason:
      "These clients turn any word-break into `word-wrap:break-word`, which is what is asked: a word longer than the line breaks where it meets the signature's edge, and nothing else changes.",
  },
  {
    id: 'word-break-yahoo',
    clients: YAHOO,
    title: 'word-break',
    applies: (u) => u.kind === 'css' && u.tag === 'table' && u.value === 'break-word',
    reason:
      "Yahoo drops word-break. Lines still wrap between words inside the signature's max-width; only a single word longer than the line (a 60-character address with no break) widens the signature there, as it did everywhere before.",
  },
  {
    id: 'dir-on-spans',
    clients: ['outlook.windows'],
    title: 'dir attribute',
    applies: (u) => u.kind === 'attribute' && u.tag === 'span' && (u.value === 'ltr' || u.value === 'rtl'),
    reason: "Outlook for Windows mishandles `dir` on links only; a value's direction is on a span of its own, inside the link when it has one.",
  },
  {
    id: 'max-width-on-images',
    clients: ['outlook.windows'],
    title: 'max-width',
    applies: (u) => u.kind === 'css' && u.tag === 'img' && u.attrs.width !== undefined && `${u.attrs.width}px` === u.value,
    reason:
      'max-width on an image only repeats its width attribute (it stops clients that widen images from doing so); Outlook for Windows keeps to the attribute.',
  },
  {
    id: 'height-auto',
    clients: ['outlook.windows', ...YAHOO],
    title: 'height property',
    applies: (u) => u.kind === 'css' && u.tag === 'img' && u.value === 'auto',
    reason:
      "height:auto keeps an image's proportions; Yahoo turns it into min-height:auto, which is the default, and Outlook for Windows sizes images from their attributes.",
  },
  {
    id: 'role-on-tables',
    clients: YAHOO,
    title: 'role attribute',
    applies: (u) => u.kind === 'attribute' && u.tag === 'table',
    reason: 'role="presentation" only tells screen readers the tables are layout; Yahoo keeps it on tables, the only place it is written.',
  },
  {
    id: 'mailto-without-bcc',
    clients: ['yahoo.android'],
    title: 'mailto: links',
    applies: (u) => u.kind === 'attribute' && !/[?&]bcc=/i.test(u.value),
    reason: 'Yahoo Mail for Android drops only a `bcc` in mailto: links; this link has none.',
  },
  {
    id: 'rgba-comma-syntax',
    clients: ['gmail.desktop-webmail', 'gmail.ios', 'gmail.android', ...YAHOO],
    title: 'rgba()',
    applies: (u) => u.kind === 'css' && /^rgba\(\d+,\d+,\d+,[\d.]+\)$/.test(u.value),
    reason: 'These clients lack the space-separated rgba() syntax; see-through colours are written with commas.',
  },
  {
    id: 'rgba-solid-fallback',
    clients: ['outlook.windows'],
    title: 'rgba()',
    applies: (u) => u.kind === 'css' && priorSolid(u) !== undefined,
    reason: 'Outlook for Windows has no see-through colours; the same colour laid on white is written just before, and Outlook keeps it.',
    shows: (u) => `the see-through ${u.name === 'color' ? 'text colour' : 'background'} ${u.value} of ${partWords(u)} shows as the solid ${priorSolid(u)}`,
  },
];
