/**
 * The signature content tree (spec 2.2) as ONE zod schema, and its validator.
 *
 * Glossary
 * - block: an object with a `type`. The root is a `stack`. A `stack` holds `children` (stack, text,
 *   list, socialList); a `list` holds `listItem`s; a `socialList` holds `socialListItem`s.
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
 * Validation never throws and never recurses without bound: a cheap iterative pre-walk rejects input
 * nested deeper than any valid tree can be, or with too many values, before zod sees it. Errors come
 * back as the spec's validation details (section 7) with a field path such as
 * `signature.draft_content.children[2].tokens[0].textStyle.fontSize`.
 */
import { z } from 'zod';
import { detail, type ValidationDetail } from '../api/errors.ts';
import { COLOR_FORMS, COLOR_PATTERN } from './colors.ts';
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

/** JSON nesting a valid tree cannot exceed (blocks × 2 for their arrays, plus a token's own depth). */
const MAX_JSON_DEPTH = LIMITS.maxDepth * 2 + 12;
/** JSON values a valid tree cannot exceed by much; beyond it validation stops before zod runs. */
const MAX_JSON_NODES = 100_000;
/** Details reported at most; a tree with more problems gets the first ones. */
const MAX_DETAILS = 50;

// ---------------------------------------------------------------------------------------------
// Enums

export const BLOCK_TYPES = ['stack', 'text', 'list', 'socialList', 'listItem', 'listItemLabel', 'socialListItem'] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];
export const STACK_CHILD_TYPES = ['stack', 'text', 'list', 'socialList'] as const;
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
  .describe('Id of a smart field of the workspace (GET /v1/smart_fields); resolves to each teammate\'s value.');
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
    width: z.number().min(LIMITS.width.minimum).max(LIMITS.width.maximum).optional().describe('Width in px; on a text block holding an image field, the image width (default 80).'),
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
    values: z.array(queryParamValueSchema).max(LIMITS.maxQueryParamValues).describe('Concatenated into the parameter value; a parameter whose value resolves empty is left out.'),
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
    textStyle: textStyleSchema.optional(),
    href: hrefSchema.optional(),
  })
  .meta({ id: 'textToken', description: 'A run of text. At least one of value and smartFieldUuid.' });

const tokens = z.array(textTokenSchema).min(1).max(LIMITS.maxTokens);

const common = {
  id: id.optional(),
  visible: z.boolean().optional().describe('Default true; a block with visible:false is not rendered.'),
  displayName: z.string().max(LIMITS.maxDisplayNameLength).optional().describe('Name shown in the editor; not rendered.'),
};

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
    separator: z.string().max(LIMITS.maxSeparatorLength).optional().describe('Between items of a horizontal list, default " | ". Only between items that are shown.'),
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
export type StackChild = StackBlock | TextBlock | ListBlock | SocialListBlock;
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

const stackChildSchema = z.discriminatedUnion('type', [stackSchema as z.ZodType<StackBlock> & z.ZodObject, textSchema, listSchema, socialListSchema]);

/** The content tree: a stack at the root. */
export const contentTreeSchema = stackSchema;

// ---------------------------------------------------------------------------------------------
// Validation

export type ValidationResult = { ok: true; tree: ContentTree } | { ok: false; details: ValidationDetail[] };

export interface ValidateOptions {
  /** The request field holding the tree, prefixed to every path: `signature.draft_content`. */
  field: string;
  /** Ids of the workspace's smart fields; every smartFieldUuid must be one of them. */
  smartFieldIds: ReadonlySet<string>;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `children[2].tokens[0].textStyle.fontSize`, appended to `base`. */
export function formatPath(base: string, path: readonly PropertyKey[]): string {
  let s = base;
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else if (typeof p === 'string' && IDENT.test(p)) s += s ? `.${p}` : p;
    else s += `[${JSON.stringify(String(p))}]`;
  }
  return s;
}

/**
 * Validates a content tree. Never throws: whatever `tree` holds, the answer is the parsed tree or a
 * non-empty list of details (at most 50), each with the path of the offending member. Shape errors
 * are reported first; references (smart fields, depth, block count) are checked once the shape is
 * right.
 */
export function validateContent(tree: unknown, opts: ValidateOptions): ValidationResult {
  try {
    const shape = checkShape(tree, opts.field);
    if (shape) return { ok: false, details: [shape] };
    const parsed = contentTreeSchema.safeParse(tree);
    if (!parsed.success) {
      const details: ValidationDetail[] = [];
      for (const issue of parsed.error.issues) {
        for (const d of issueDetails(issue, tree, opts.field)) {
          if (details.length < MAX_DETAILS) details.push(d);
        }
      }
      return { ok: false, details: details.length ? details : [detail(opts.field, 'invalid', 'The content tree is invalid.')] };
    }
    const details = checkReferences(parsed.data, opts);
    return details.length ? { ok: false, details } : { ok: true, tree: parsed.data };
  } catch (err) {
    // The checks above are total over JSON-like input; this covers exotic objects (throwing getters,
    // proxies) so a request can never turn into a 500.
    return { ok: false, details: [detail(opts.field, 'invalid', `The content tree could not be read: ${(err as Error)?.message ?? 'unknown error'}`)] };
  }
}

/** Iterative walk bounding JSON depth and size, so zod never recurses on hostile nesting. */
function checkShape(tree: unknown, field: string): ValidationDetail | undefined {
  const stack: { value: unknown; depth: number; path: PropertyKey[] }[] = [{ value: tree, depth: 0, path: [] }];
  let nodes = 0;
  while (stack.length) {
    const { value, depth, path } = stack.pop()!;
    if (++nodes > MAX_JSON_NODES) return detail(field, 'too_large', `The content tree holds more than ${MAX_JSON_NODES} values.`, { allowed: [{ maximum: MAX_JSON_NODES }] });
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return detail(formatPath(field, path), 'too_deep', `The content tree is nested too deeply: blocks nest at most ${LIMITS.maxDepth} levels.`, { allowed: [{ maximum: LIMITS.maxDepth }] });
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], depth: depth + 1, path: [...path, i] });
    } else {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        stack.push({ value: (value as Record<string, unknown>)[k], depth: depth + 1, path: [...path, k] });
      }
    }
  }
  return undefined;
}

const BLOCK_STYLE_KEYS = Object.keys(blockStyleSchema.shape);
const TEXT_STYLE_KEYS = Object.keys(textStyleSchema.shape);
const HREF_KEYS = Object.keys(hrefSchema.shape);
const QUERY_PARAM_KEYS = Object.keys(queryParamSchema.shape);
const QUERY_VALUE_KEYS = Object.keys(queryParamValueSchema.shape);
const TOKEN_KEYS = Object.keys(textTokenSchema.shape);
const BLOCK_KEYS: Record<string, string[]> = {
  stack: [...Object.keys(common), 'type', 'blockStyle', 'direction', 'verticalAlign', 'children'],
  text: Object.keys(textSchema.shape),
  list: Object.keys(listSchema.shape),
  listItem: Object.keys(listItemSchema.shape),
  listItemLabel: Object.keys(listItemLabelSchema.shape),
  socialList: Object.keys(socialListSchema.shape),
  socialListItem: Object.keys(socialListItemSchema.shape),
};

/** Block types allowed at a path, from the name of the array holding the block. */
function blockTypesAt(path: readonly PropertyKey[], root: unknown): readonly string[] {
  if (path.length === 0) return ['stack'];
  const parentKey = path[path.length - 2];
  if (parentKey === 'label') return ['listItemLabel'];
  if (path[path.length - 1] === 'label') return ['listItemLabel'];
  if (parentKey === 'children') {
    const parent = valueAt(root, path.slice(0, -2)) as { type?: unknown } | undefined;
    if (parent?.type === 'list') return ['listItem'];
    if (parent?.type === 'socialList') return ['socialListItem'];
  }
  return STACK_CHILD_TYPES;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/** The keys an object at `path` may have, for `allowed` in unknown-key errors. */
function knownKeysAt(path: readonly PropertyKey[], root: unknown): string[] {
  const last = path[path.length - 1];
  const prev = path[path.length - 2];
  if (last === 'blockStyle') return BLOCK_STYLE_KEYS;
  if (last === 'textStyle' || last === 'separatorStyle') return TEXT_STYLE_KEYS;
  if (last === 'href') return HREF_KEYS;
  if (prev === 'queryParams') return QUERY_PARAM_KEYS;
  if (prev === 'values') return QUERY_VALUE_KEYS;
  if (prev === 'tokens') return TOKEN_KEYS;
  const type = (valueAt(root, path) as { type?: unknown } | undefined)?.type;
  return (typeof type === 'string' && BLOCK_KEYS[type]) || [];
}

function rangeOf(issue: { minimum?: unknown; maximum?: unknown }): unknown[] {
  const r: Record<string, unknown> = {};
  if (issue.minimum !== undefined) r.minimum = typeof issue.minimum === 'bigint' ? Number(issue.minimum) : issue.minimum;
  if (issue.maximum !== undefined) r.maximum = typeof issue.maximum === 'bigint' ? Number(issue.maximum) : issue.maximum;
  return Object.keys(r).length ? [r] : [];
}

function describeValue(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : typeof v;
}

/** One zod issue → the spec's validation details. */
function issueDetails(issue: z.core.$ZodIssue, root: unknown, base: string): ValidationDetail[] {
  const path = issue.path;
  const field = formatPath(base, path);
  const last = path[path.length - 1];
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = knownKeysAt(path, root);
      return issue.keys.map((k) => detail(formatPath(field, [k]), 'unknown_field', `Unknown field "${k}".`, { allowed }));
    }
    case 'invalid_type': {
      const input = valueAt(root, path);
      if (input === undefined) {
        return [detail(field, 'required', `${String(last ?? 'The content tree')} is required.`, { missing: [String(last ?? base)] })];
      }
      return [detail(field, 'invalid_type', `Must be ${issue.expected === 'array' || issue.expected === 'object' ? 'an' : 'a'} ${issue.expected}, got ${describeValue(input)}.`, { allowed: [issue.expected] })];
    }
    case 'invalid_union': {
      if ('discriminator' in issue && issue.discriminator === 'type') {
        const blockPath = path[path.length - 1] === 'type' ? path.slice(0, -1) : path;
        const allowed = blockTypesAt(blockPath, root);
        const input = valueAt(root, blockPath) as { type?: unknown } | undefined;
        const typeField = formatPath(base, [...blockPath, 'type']);
        if (input?.type === undefined) return [detail(typeField, 'required', 'type is required.', { missing: ['type'], allowed: [...allowed] })];
        return [detail(typeField, 'invalid_value', `Block type ${JSON.stringify(input.type)} is not allowed here; expected one of ${allowed.join(', ')}.`, { allowed: [...allowed] })];
      }
      return [detail(field, 'invalid_value', issue.message)];
    }
    case 'invalid_value': {
      if (last === 'type' && issue.values.length === 1) {
        const blockPath = path.slice(0, -1);
        const allowed = path.length === 1 || path[path.length - 3] === 'children' || path[path.length - 2] === 'label' ? blockTypesAt(blockPath, root) : issue.values;
        return [detail(field, 'invalid_value', `Type ${JSON.stringify(valueAt(root, path))} is not allowed here; expected ${allowed.join(', ')}.`, { allowed: [...allowed] })];
      }
      return [detail(field, 'invalid_value', `Must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}.`, { allowed: [...issue.values] })];
    }
    case 'too_small':
    case 'too_big': {
      const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
      const what =
        issue.origin === 'number'
          ? `Must be ${issue.code === 'too_small' ? 'at least' : 'at most'} ${String(bound)}.`
          : issue.origin === 'array'
            ? `Must hold ${issue.code === 'too_small' ? 'at least' : 'at most'} ${String(bound)} item${Number(bound) === 1 ? '' : 's'}.`
            : `Must be ${issue.code === 'too_small' ? 'at least' : 'at most'} ${String(bound)} character${Number(bound) === 1 ? '' : 's'} long.`;
      const range = issue.origin === 'number' ? numberRange(last) : undefined;
      return [detail(field, issue.code, what, { allowed: range ? [range] : rangeOf(issue) })];
    }
    case 'invalid_format': {
      if (last === 'text') {
        return [detail(field, 'invalid_href', 'Must start with https://, http://, mailto: or tel: (javascript:, data: and relative links are not allowed; no spaces outside tel:).', { allowed: [...HREF_SCHEMES] })];
      }
      return [detail(field, 'invalid_color', `Must be a CSS colour; got ${JSON.stringify(valueAt(root, path))}.`, { allowed: COLOR_FORMS })];
    }
    default:
      return [detail(field, issue.code, issue.message)];
  }
}

/** The documented range of a numeric member, for `allowed`. */
function numberRange(key: PropertyKey | undefined): { minimum: number; maximum: number } | undefined {
  switch (key) {
    case 'fontSize':
      return LIMITS.fontSize;
    case 'lineHeight':
      return LIMITS.lineHeight;
    case 'width':
      return LIMITS.width;
    case 'iconSize':
      return LIMITS.iconSize;
    case undefined:
      return undefined;
    default:
      return typeof key === 'string' && (key.startsWith('margin') || key.startsWith('padding') || key === 'gap') ? LIMITS.spacing : undefined;
  }
}

/** Checks zod cannot express: depth, total size, smart field references, one-of members. */
function checkReferences(tree: ContentTree, opts: ValidateOptions): ValidationDetail[] {
  const details: ValidationDetail[] = [];
  const add = (d: ValidationDetail) => {
    if (details.length < MAX_DETAILS) details.push(d);
  };
  const known = opts.smartFieldIds;
  const allowedIds = known.size <= 100 ? [...known] : [];
  let blocks = 0;

  const smartField = (id: string | undefined, path: PropertyKey[]) => {
    if (id !== undefined && !known.has(id)) {
      add(detail(formatPath(opts.field, path), 'unknown_smart_field', `No smart field ${JSON.stringify(id)} in this workspace.`, { allowed: allowedIds }));
    }
  };
  const href = (h: Href, path: PropertyKey[]) => {
    if (h.text === undefined && h.smartFieldUuid === undefined) {
      add(detail(formatPath(opts.field, path), 'required', 'A link needs text (the URL) or smartFieldUuid.', { missing: ['text'] }));
    }
    smartField(h.smartFieldUuid, [...path, 'smartFieldUuid']);
    h.queryParams?.forEach((q, i) => q.values.forEach((v, j) => smartField(v.smartFieldUuid, [...path, 'queryParams', i, 'values', j, 'smartFieldUuid'])));
  };
  const tokenList = (list: TextToken[], path: PropertyKey[]) =>
    list.forEach((t, i) => {
      const p = [...path, i];
      if (t.value === undefined && t.smartFieldUuid === undefined) {
        add(detail(formatPath(opts.field, p), 'required', 'A token needs a value or a smartFieldUuid.', { missing: ['value'] }));
      }
      smartField(t.smartFieldUuid, [...p, 'smartFieldUuid']);
      if (t.href) href(t.href, [...p, 'href']);
    });
  const walk = (b: Block, path: PropertyKey[], depth: number) => {
    blocks++;
    if (blocks === LIMITS.maxBlocks + 1) add(detail(formatPath(opts.field, path), 'too_large', `A content tree holds at most ${LIMITS.maxBlocks} blocks.`, { allowed: [{ maximum: LIMITS.maxBlocks }] }));
    if (depth > LIMITS.maxDepth) {
      add(detail(formatPath(opts.field, path), 'too_deep', `Blocks nest at most ${LIMITS.maxDepth} levels.`, { allowed: [{ maximum: LIMITS.maxDepth }] }));
      return;
    }
    switch (b.type) {
      case 'stack':
        b.children.forEach((c, i) => walk(c, [...path, 'children', i], depth + 1));
        break;
      case 'text':
        tokenList(b.tokens, [...path, 'tokens']);
        break;
      case 'list':
        b.children.forEach((c, i) => walk(c, [...path, 'children', i], depth + 1));
        break;
      case 'listItem':
        if (b.label) walk(b.label, [...path, 'label'], depth + 1);
        tokenList(b.tokens, [...path, 'tokens']);
        break;
      case 'listItemLabel':
        tokenList(b.tokens, [...path, 'tokens']);
        break;
      case 'socialList':
        b.children.forEach((c, i) => walk(c, [...path, 'children', i], depth + 1));
        break;
      case 'socialListItem':
        href(b.href, [...path, 'href']);
        break;
    }
  };
  walk(tree, [], 1);
  return details;
}
