/**
 * The signature content tree (spec 2.2) as ONE zod schema.
 *
 * Glossary
 * - block: an object with a `type`. The root is a `stack`. A `stack` holds `children` (stack, text,
 *   list, socialList, optOut); a `list` holds `listItem`s; a `socialList` holds `socialListItem`s.
 *   An `optOut` is a line linking to the workspace's opt-out link, which the render supplies.
 * - token: a `textToken` inside a `text`, `listItem` or `listItemLabel`. It shows its literal `value`,
 *   or, when `smartFieldUuid` is set, the teammate's value of that smart field (`value` is then only
 *   used as the alt text of image fields; editors usually keep the field's label there).
 * - href: a link on a token or a social item. `text` is the URL, or its prefix when `smartFieldUuid`
 *   is also set (`{text:"mailto:", smartFieldUuid:<email field>}`); `queryParams` are appended,
 *   URL-encoded, each value the concatenation of its parts (literal `text` or a smart field).
 *
 * Every object is strict: an unknown key is an error, not silently dropped. Optional members have
 * the defaults stated in their descriptions, applied by the renderer (the schema has no `.default()`,
 * so a validated tree is stored exactly as it was sent).
 *
 * Beyond the spec's table, the schema accepts a few optional members that a signature needs and the
 * spec leaves open ("fields seen"): `stack.direction` and `stack.verticalAlign`; `list.direction`,
 * `list.separator` and `list.separatorStyle`; `listItem.label`; `socialList.iconSize`;
 * `socialListItem.network` and `href`; `textStyle.fontFamily`, `fontWeight`, `fontStyle`,
 * `textDecoration`.
 *
 * The validator (strict shape, referential checks, spec-shaped errors) is in validate.ts.
 */
import { z } from 'zod';
import { COLOR_PATTERN } from './colors.ts';
import { SOCIAL_NETWORKS } from './social.ts';

// ---------------------------------------------------------------------------------------------
// Limits

/** Bounds on sizes and shapes. Every one is reported in `enums.limits` of GET /v1/content_schema. */
export const LIMITS = {
  /** Blocks nested inside each other, the root stack counting as 1. */
  maxDepth: 10,
  /** Blocks in one tree, all levels together. */
  maxBlocks: 500,
  /** Children of one stack, list or socialList. */
  maxChildren: 50,
  /** Tokens of one text, listItem or listItemLabel. */
  maxTokens: 100,
  /** Characters of one literal token value. */
  maxValueLength: 2000,
  /** Characters of one href text. */
  maxHrefLength: 2048,
  maxQueryParams: 20,
  maxQueryParamValues: 10,
  /** Characters of ids, smart field ids, query keys and display names. */
  maxIdLength: 100,
  maxDisplayNameLength: 200,
  maxSeparatorLength: 10,
  /** px, for margins, paddings and gap. */
  spacing: { minimum: 0, maximum: 200 },
  /** px. */
  width: { minimum: 1, maximum: 1000 },
  /** px. */
  fontSize: { minimum: 6, maximum: 72 },
  /** A multiple of the font size; rendered as px (fontSize × lineHeight). */
  lineHeight: { minimum: 0.5, maximum: 4 },
  /** px, social icons are square. */
  iconSize: { minimum: 12, maximum: 64 },
} as const;

// ---------------------------------------------------------------------------------------------
// Enums

export const BLOCK_TYPES = ['stack', 'text', 'list', 'socialList', 'optOut', 'listItem', 'listItemLabel', 'socialListItem'] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];
export const STACK_CHILD_TYPES = ['stack', 'text', 'list', 'socialList', 'optOut'] as const;
export const DIRECTIONS = ['vertical', 'horizontal'] as const;
export const VERTICAL_ALIGNS = ['top', 'middle', 'bottom'] as const;
export const FONT_WEIGHTS = ['normal', 'bold'] as const;
export const FONT_STYLES = ['normal', 'italic'] as const;
export const TEXT_DECORATIONS = ['none', 'underline'] as const;
export const HREF_SCHEMES = ['https:', 'http:', 'mailto:', 'tel:'] as const;

/** Font choices, each a web-safe CSS stack that every mail client has. */
export const FONT_FAMILIES = {
  arial: 'Arial,Helvetica,sans-serif',
  helvetica: 'Helvetica,Arial,sans-serif',
  verdana: 'Verdana,Geneva,sans-serif',
  tahoma: 'Tahoma,Geneva,sans-serif',
  trebuchet: "'Trebuchet MS',Helvetica,sans-serif",
  georgia: 'Georgia,serif',
  times: "'Times New Roman',Times,serif",
  courier: "'Courier New',Courier,monospace",
} as const;
export type FontFamily = keyof typeof FONT_FAMILIES;
const FONT_FAMILY_KEYS = Object.keys(FONT_FAMILIES) as [FontFamily, ...FontFamily[]];

/** Rendering defaults, applied where a member is absent. */
export const DEFAULTS = {
  fontFamily: 'arial' as FontFamily,
  fontSize: 14,
  lineHeight: 1.4,
  color: '#222222',
  iconSize: 20,
  separator: ' | ',
  imageWidth: 80,
  optOutText: 'Stop tracking me',
} as const;

// ---------------------------------------------------------------------------------------------
// The schema

/** `https://…`, `http://…`, `mailto:…`, `tel:…`, lowercase scheme, no whitespace except inside `tel:`. */
export const HREF_TEXT_PATTERN = '^(?:https?://[^\\s<>"]*|mailto:[^\\s<>"]*|tel:[^\\n\\r\\t<>"]*)$';

const id = z.string().min(1).max(LIMITS.maxIdLength).describe('Stable id of the element, kept across edits.');
const smartFieldUuid = z
  .string()
  .min(1)
  .max(LIMITS.maxIdLength)
  .describe("Id of a smart field of the workspace (GET /v1/smart_fields); resolves to each teammate's value.");
const color = z
  .string()
  .max(64)
  .regex(new RegExp(COLOR_PATTERN), 'must be a CSS colour (#rgb, #rrggbb, rgb(), rgba(), hsl(), hsla() or a lowercase named colour)')
  .meta({ id: 'color', description: 'A CSS colour: #rgb, #rgba, #rrggbb, #rrggbbaa, rgb(), rgba(), hsl(), hsla() or a lowercase named colour.' });
const spacing = z.number().min(LIMITS.spacing.minimum).max(LIMITS.spacing.maximum);

export const blockStyleSchema = z
  .strictObject({
    marginTop: spacing.optional(),
    marginRight: spacing.optional(),
    marginBottom: spacing.optional(),
    marginLeft: spacing.optional(),
    paddingTop: spacing.optional(),
    paddingRight: spacing.optional(),
    paddingBottom: spacing.optional(),
    paddingLeft: spacing.optional(),
    backgroundColor: color.optional(),
    gap: spacing.optional().describe('Space between children (px), default 0.'),
    width: z
      .number()
      .min(LIMITS.width.minimum)
      .max(LIMITS.width.maximum)
      .optional()
      .describe('Width in px; on a text block holding an image field, the image width (default 80).'),
  })
  .meta({ id: 'blockStyle', description: 'Box of a block, in px. Margins sit outside the background, paddings inside.' });

export const textStyleSchema = z
  .strictObject({
    fontSize: z.number().min(LIMITS.fontSize.minimum).max(LIMITS.fontSize.maximum).optional().describe('px, default 14.'),
    color: color.optional().describe('Default #222222.'),
    lineHeight: z.number().min(LIMITS.lineHeight.minimum).max(LIMITS.lineHeight.maximum).optional().describe('Multiple of fontSize, default 1.4.'),
    fontFamily: z.enum(FONT_FAMILY_KEYS).optional().describe('Default arial.'),
    fontWeight: z.enum(FONT_WEIGHTS).optional(),
    fontStyle: z.enum(FONT_STYLES).optional(),
    textDecoration: z.enum(TEXT_DECORATIONS).optional().describe('Links default to none.'),
  })
  .meta({ id: 'textStyle', description: 'Text style of a token.' });

export const queryParamValueSchema = z.strictObject({
  id: id.optional(),
  text: z.string().max(500).optional(),
  smartFieldUuid: smartFieldUuid.optional(),
});

export const queryParamSchema = z
  .strictObject({
    id: id.optional(),
    key: z.string().min(1).max(LIMITS.maxIdLength),
    values: z
      .array(queryParamValueSchema)
      .max(LIMITS.maxQueryParamValues)
      .describe('Concatenated into the parameter value; a parameter whose value resolves empty is left out.'),
  })
  .describe('One query parameter appended to the link, key and value URL-encoded.');

export const hrefSchema = z
  .strictObject({
    text: z
      .string()
      .max(LIMITS.maxHrefLength)
      .regex(new RegExp(HREF_TEXT_PATTERN), 'must start with https://, http://, mailto: or tel:')
      .optional()
      .describe('The URL, or its prefix when smartFieldUuid is set.'),
    smartFieldUuid: smartFieldUuid.optional().describe('Appended to text; a token whose link resolves empty is left out.'),
    queryParams: z.array(queryParamSchema).max(LIMITS.maxQueryParams).optional(),
  })
  .meta({ id: 'href', description: 'A link. At least one of text and smartFieldUuid. Schemes: https, http, mailto, tel.' });

export const textTokenSchema = z
  .strictObject({
    id: id.optional(),
    type: z.literal('textToken'),
    value: z.string().max(LIMITS.maxValueLength).optional().describe('Literal text; for a smart token only the alt text of image fields.'),
    smartFieldUuid: smartFieldUuid.optional(),
    assetUuid: z
      .string()
      .min(1)
      .max(LIMITS.maxIdLength)
      .optional()
      .describe(
        'An image: the id of a workspace asset (POST /v1/assets), as wide as the text block (blockStyle.width, default 80 px); value is its alt text. Not with smartFieldUuid.',
      ),
    textStyle: textStyleSchema.optional(),
    href: hrefSchema.optional(),
  })
  .meta({ id: 'textToken', description: 'A run of text, or an image with assetUuid. At least one of value, smartFieldUuid and assetUuid.' });

const tokens = z.array(textTokenSchema).min(1).max(LIMITS.maxTokens);

const common = {
  id: id.optional(),
  visible: z.boolean().optional().describe('Default true; a block with visible:false is not rendered.'),
  displayName: z.string().max(LIMITS.maxDisplayNameLength).optional().describe('Name shown in the editor; not rendered.'),
};
/** The members every block has besides its own. */
export const COMMON_BLOCK_KEYS = Object.keys(common);

export const textSchema = z
  .strictObject({ ...common, type: z.literal('text'), blockStyle: blockStyleSchema.optional(), tokens })
  .describe('A line of text. Dropped when it has smart tokens and all of them resolve empty.');

export const listItemLabelSchema = z
  .strictObject({ ...common, type: z.literal('listItemLabel'), tokens: z.array(textTokenSchema).min(1).max(20) })
  .describe('A label before a list item value ("T: "). Shown only when the item is.');

export const listItemSchema = z
  .strictObject({ ...common, type: z.literal('listItem'), blockStyle: blockStyleSchema.optional(), label: listItemLabelSchema.optional(), tokens })
  .describe('One entry of a list. Dropped, label included, when its smart tokens all resolve empty. blockStyle applies in vertical lists.');

export const listSchema = z
  .strictObject({
    ...common,
    type: z.literal('list'),
    blockStyle: blockStyleSchema.optional(),
    direction: z.enum(DIRECTIONS).optional().describe('Default vertical: one item per line. Horizontal: items on one line, joined by separator.'),
    separator: z
      .string()
      .max(LIMITS.maxSeparatorLength)
      .optional()
      .describe('Between items of a horizontal list, default " | ". Only between items that are shown.'),
    separatorStyle: textStyleSchema.optional(),
    children: z.array(listItemSchema).min(1).max(LIMITS.maxChildren),
  })
  .describe('Contact details and the like.');

export const socialListItemSchema = z
  .strictObject({ ...common, type: z.literal('socialListItem'), network: z.enum(SOCIAL_NETWORKS), href: hrefSchema })
  .describe('A social icon linking to a profile; dropped when its link resolves empty.');

export const socialListSchema = z
  .strictObject({
    ...common,
    type: z.literal('socialList'),
    blockStyle: blockStyleSchema.optional(),
    iconSize: z.number().min(LIMITS.iconSize.minimum).max(LIMITS.iconSize.maximum).optional().describe('px, default 20.'),
    children: z.array(socialListItemSchema).min(1).max(LIMITS.maxChildren),
  })
  .describe('A row of social icons (icon URLs: social_icons).');

export const optOutSchema = z
  .strictObject({
    ...common,
    type: z.literal('optOut'),
    blockStyle: blockStyleSchema.optional(),
    text: z.string().min(1).max(LIMITS.maxValueLength).optional().describe(`The link's text, default "${DEFAULTS.optOutText}".`),
    textStyle: textStyleSchema.optional(),
  })
  .describe(
    "A line with the workspace's opt-out link (docs/privacy.md): a recipient who follows and confirms it is no longer tracked per person. The link is the workspace's own, never tracked; it cannot be set here.",
  );

export type BlockStyle = z.infer<typeof blockStyleSchema>;
export type TextStyle = z.infer<typeof textStyleSchema>;
export type Href = z.infer<typeof hrefSchema>;
export type QueryParam = z.infer<typeof queryParamSchema>;
export type TextToken = z.infer<typeof textTokenSchema>;
export type TextBlock = z.infer<typeof textSchema>;
export type ListItemLabelBlock = z.infer<typeof listItemLabelSchema>;
export type ListItemBlock = z.infer<typeof listItemSchema>;
export type ListBlock = z.infer<typeof listSchema>;
export type SocialListItemBlock = z.infer<typeof socialListItemSchema>;
export type SocialListBlock = z.infer<typeof socialListSchema>;
export type OptOutBlock = z.infer<typeof optOutSchema>;

export interface StackBlock {
  id?: string | undefined;
  visible?: boolean | undefined;
  displayName?: string | undefined;
  type: 'stack';
  blockStyle?: BlockStyle | undefined;
  direction?: (typeof DIRECTIONS)[number] | undefined;
  verticalAlign?: (typeof VERTICAL_ALIGNS)[number] | undefined;
  children: StackChild[];
}
export type StackChild = StackBlock | TextBlock | ListBlock | SocialListBlock | OptOutBlock;
export type Block = StackChild | ListItemBlock | ListItemLabelBlock | SocialListItemBlock;
/** A validated content tree: its root is a stack. */
export type ContentTree = StackBlock;

export const stackSchema: z.ZodType<StackBlock> = z
  .strictObject({
    ...common,
    type: z.literal('stack'),
    blockStyle: blockStyleSchema.optional(),
    direction: z.enum(DIRECTIONS).optional().describe('Default vertical (rows); horizontal puts children side by side (columns).'),
    verticalAlign: z.enum(VERTICAL_ALIGNS).optional().describe('Of the children of a horizontal stack, default top.'),
    get children() {
      return z.array(stackChildSchema).max(LIMITS.maxChildren);
    },
  })
  .meta({ id: 'stack', description: 'Rows (vertical) or columns (horizontal). Dropped when it has children and none is shown.' });

const stackChildSchema = z.discriminatedUnion('type', [
  stackSchema as z.ZodType<StackBlock> & z.ZodObject,
  textSchema,
  listSchema,
  socialListSchema,
  optOutSchema,
]);

/** The content tree: a stack at the root. */
export const contentTreeSchema = stackSchema;
