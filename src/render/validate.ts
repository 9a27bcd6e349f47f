/**
 * Validation of a signature content tree against the schema (schema.ts), for the API and the
 * renderer. Never throws and never recurses without bound: a cheap iterative pre-walk rejects input
 * nested deeper than any valid tree can be, or with too many values, before zod sees it. Errors come
 * back as the spec's validation details (section 7) with a field path such as
 * `signature.draft_content.children[2].tokens[0].textStyle.fontSize`; referential checks follow
 * (every smartFieldUuid names a smart field of the workspace, every assetUuid one of its assets).
 */
import type { z } from 'zod';
import { detail, fieldPath, type ValidationDetail } from '../errors.ts';
import { COLOR_FORMS } from './colors.ts';
import {
  type Block,
  COMMON_BLOCK_KEYS,
  blockStyleSchema,
  type ContentTree,
  contentTreeSchema,
  type Href,
  HREF_SCHEMES,
  hrefSchema,
  LIMITS,
  listItemLabelSchema,
  listItemSchema,
  listSchema,
  queryParamSchema,
  queryParamValueSchema,
  socialListItemSchema,
  optOutSchema,
  socialListSchema,
  STACK_CHILD_TYPES,
  textSchema,
  textStyleSchema,
  type TextToken,
  textTokenSchema,
} from './schema.ts';

/** JSON nesting a valid tree cannot exceed (blocks × 2 for their arrays, plus a token's own depth). */
const MAX_JSON_DEPTH = LIMITS.maxDepth * 2 + 12;
/** JSON values a valid tree cannot exceed by much; beyond it validation stops before zod runs. */
const MAX_JSON_NODES = 100_000;
/** Details reported at most; a tree with more problems gets the first ones. */
const MAX_DETAILS = 50;

export type ValidationResult = { ok: true; tree: ContentTree } | { ok: false; details: ValidationDetail[] };

export interface ValidateOptions {
  /** The request field holding the tree, prefixed to every path: `signature.draft_content`. */
  field: string;
  /** Ids of the workspace's smart fields; every smartFieldUuid must be one of them. */
  smartFieldIds: ReadonlySet<string>;
  /** Ids of the workspace's assets the tree may name; every assetUuid must be one of them. Unchecked when absent. */
  assetIds?: ReadonlySet<string> | undefined;
}

/**
 * The assetUuid strings anywhere in a JSON value (before validation), to look up the assets a tree
 * names. Iterative and bounded like the shape check, so hostile nesting cannot overflow the stack.
 */
export function assetUuidsIn(tree: unknown): string[] {
  const out = new Set<string>();
  const stack: unknown[] = [tree];
  for (let nodes = 0; stack.length && nodes < MAX_JSON_NODES; nodes++) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) stack.push(...v.slice(0, MAX_JSON_NODES));
    else {
      const o = v as Record<string, unknown>;
      if (typeof o.assetUuid === 'string' && o.assetUuid.length <= LIMITS.maxIdLength) out.add(o.assetUuid);
      for (const k of Object.keys(o)) if (k !== 'assetUuid') stack.push(o[k]);
    }
  }
  return [...out];
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
    if (++nodes > MAX_JSON_NODES)
      return detail(field, 'too_large', `The content tree holds more than ${MAX_JSON_NODES} values.`, { allowed: [{ maximum: MAX_JSON_NODES }] });
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      return detail(fieldPath(path, field), 'too_deep', `The content tree is nested too deeply: blocks nest at most ${LIMITS.maxDepth} levels.`, {
        allowed: [{ maximum: LIMITS.maxDepth }],
      });
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
  stack: [...COMMON_BLOCK_KEYS, 'type', 'blockStyle', 'direction', 'verticalAlign', 'children'],
  text: Object.keys(textSchema.shape),
  list: Object.keys(listSchema.shape),
  listItem: Object.keys(listItemSchema.shape),
  listItemLabel: Object.keys(listItemLabelSchema.shape),
  socialList: Object.keys(socialListSchema.shape),
  socialListItem: Object.keys(socialListItemSchema.shape),
  optOut: Object.keys(optOutSchema.shape),
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
  const field = fieldPath(path, base);
  const last = path[path.length - 1];
  switch (issue.code) {
    case 'unrecognized_keys': {
      const allowed = knownKeysAt(path, root);
      return issue.keys.map((k) => detail(fieldPath([k], field), 'unknown_field', `Unknown field "${k}".`, { allowed }));
    }
    case 'invalid_type': {
      const input = valueAt(root, path);
      if (input === undefined) {
        return [detail(field, 'required', `${String(last ?? 'The content tree')} is required.`, { missing: [String(last ?? base)] })];
      }
      return [
        detail(
          field,
          'invalid_type',
          `Must be ${issue.expected === 'array' || issue.expected === 'object' ? 'an' : 'a'} ${issue.expected}, got ${describeValue(input)}.`,
          { allowed: [issue.expected] },
        ),
      ];
    }
    case 'invalid_union': {
      if ('discriminator' in issue && issue.discriminator === 'type') {
        const blockPath = path[path.length - 1] === 'type' ? path.slice(0, -1) : path;
        const allowed = blockTypesAt(blockPath, root);
        const input = valueAt(root, blockPath) as { type?: unknown } | undefined;
        const typeField = fieldPath([...blockPath, 'type'], base);
        if (input?.type === undefined) return [detail(typeField, 'required', 'type is required.', { missing: ['type'], allowed: [...allowed] })];
        return [
          detail(typeField, 'invalid_value', `Block type ${JSON.stringify(input.type)} is not allowed here; expected one of ${allowed.join(', ')}.`, {
            allowed: [...allowed],
          }),
        ];
      }
      return [detail(field, 'invalid_value', issue.message)];
    }
    case 'invalid_value': {
      if (last === 'type' && issue.values.length === 1) {
        const blockPath = path.slice(0, -1);
        const allowed =
          path.length === 1 || path[path.length - 3] === 'children' || path[path.length - 2] === 'label' ? blockTypesAt(blockPath, root) : issue.values;
        return [
          detail(field, 'invalid_value', `Type ${JSON.stringify(valueAt(root, path))} is not allowed here; expected ${allowed.join(', ')}.`, {
            allowed: [...allowed],
          }),
        ];
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
        return [
          detail(
            field,
            'invalid_href',
            'Must start with https://, http://, mailto: or tel: (javascript:, data: and relative links are not allowed; no spaces outside tel:).',
            { allowed: [...HREF_SCHEMES] },
          ),
        ];
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
      add(detail(fieldPath(path, opts.field), 'unknown_smart_field', `No smart field ${JSON.stringify(id)} in this workspace.`, { allowed: allowedIds }));
    }
  };
  const asset = (id: string, withSmartField: boolean, path: PropertyKey[]) => {
    if (withSmartField) add(detail(fieldPath(path, opts.field), 'invalid_value', 'A token shows either an asset or a smart field, not both.'));
    else if (opts.assetIds && !opts.assetIds.has(id.toLowerCase()))
      add(detail(fieldPath(path, opts.field), 'unknown_asset', `No asset ${JSON.stringify(id)} in this workspace.`));
  };
  const href = (h: Href, path: PropertyKey[]) => {
    if (h.text === undefined && h.smartFieldUuid === undefined) {
      add(detail(fieldPath(path, opts.field), 'required', 'A link needs text (the URL) or smartFieldUuid.', { missing: ['text'] }));
    }
    smartField(h.smartFieldUuid, [...path, 'smartFieldUuid']);
    h.queryParams?.forEach((q, i) => q.values.forEach((v, j) => smartField(v.smartFieldUuid, [...path, 'queryParams', i, 'values', j, 'smartFieldUuid'])));
  };
  const tokenList = (list: TextToken[], path: PropertyKey[]) =>
    list.forEach((t, i) => {
      const p = [...path, i];
      if (t.value === undefined && t.smartFieldUuid === undefined && t.assetUuid === undefined) {
        add(detail(fieldPath(p, opts.field), 'required', 'A token needs a value, a smartFieldUuid or an assetUuid.', { missing: ['value'] }));
      }
      smartField(t.smartFieldUuid, [...p, 'smartFieldUuid']);
      if (t.assetUuid !== undefined) asset(t.assetUuid, t.smartFieldUuid !== undefined, [...p, 'assetUuid']);
      if (t.href) href(t.href, [...p, 'href']);
    });
  const walk = (b: Block, path: PropertyKey[], depth: number) => {
    blocks++;
    if (blocks === LIMITS.maxBlocks + 1)
      add(
        detail(fieldPath(path, opts.field), 'too_large', `A content tree holds at most ${LIMITS.maxBlocks} blocks.`, {
          allowed: [{ maximum: LIMITS.maxBlocks }],
        }),
      );
    if (depth > LIMITS.maxDepth) {
      add(detail(fieldPath(path, opts.field), 'too_deep', `Blocks nest at most ${LIMITS.maxDepth} levels.`, { allowed: [{ maximum: LIMITS.maxDepth }] }));
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
