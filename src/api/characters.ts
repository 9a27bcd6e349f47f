/**
 * Characters no request string may carry: NUL (U+0000) and unpaired UTF-16 surrogates (a JSON
 * `"\ud800"` without its partner). Postgres stores neither: `text` refuses NUL, `jsonb` refuses both
 * escapes, so such a string would fail deep inside a write. They are caught once, with the body's
 * validation (src/api/openapi.ts), and reported as 422 details `invalid_characters` naming each
 * field, or each field name that carries them.
 *
 * Names and labels (`{resource: {name | label | display_name | filename}}`) also refuse every
 * other control character (ESC, BEL, CR...): 422 `invalid_characters` naming the field.
 *
 * The walk is iterative (a hostile body may nest a few hundred thousand levels within the 1 MiB
 * limit) and builds a path only for the values it reports.
 */
import { detail, fieldPath, type ValidationDetail } from '../errors.ts';

/** Details reported at most; a body with more gets the first ones. */
const MAX_DETAILS = 50;

/** ES2024 string methods (Node ≥ 20 has them; the TypeScript lib here is ES2023). */
type Es2024String = string & { isWellFormed(): boolean };

/**
 * The fields of a write body that name or label something (`{resource: {name}}` and the like):
 * shown in lists, reports and the CLI, they refuse every control character too (C0, DEL, C1).
 */
const NAME_FIELDS = new Set(['name', 'label', 'display_name', 'filename']);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f-\x9f]/;

/** True when the string holds a NUL or a lone surrogate. */
export function hasInvalidCharacters(s: string): boolean {
  return s.includes('\u0000') || !(s as Es2024String).isWellFormed();
}

interface Node {
  value: unknown;
  parent: number;
  key: string | number | undefined;
}

/** A name or label of a write body: `{resource: {name: ...}}`, two levels down. */
function isNameField(nodes: Node[], i: number): boolean {
  const n = nodes[i]!;
  return typeof n.key === 'string' && NAME_FIELDS.has(n.key) && n.parent > 0 && nodes[n.parent]!.parent === 0 && typeof nodes[n.parent]!.key === 'string';
}

/** One `invalid_characters` detail per string value or field name holding NUL or a lone surrogate. */
export function invalidCharacterDetails(body: unknown, root = 'body'): ValidationDetail[] {
  const out: ValidationDetail[] = [];
  const nodes: Node[] = [{ value: body, parent: -1, key: undefined }];
  const pathOf = (index: number, extra?: string): string => {
    const path: (string | number)[] = extra === undefined ? [] : [extra];
    for (let i = index; i > 0; i = nodes[i]!.parent) path.unshift(nodes[i]!.key!);
    return fieldPath(path) || root;
  };
  const report = (index: number, key?: string) => {
    out.push(
      detail(
        pathOf(index, key),
        'invalid_characters',
        key === undefined
          ? 'Text must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates.'
          : 'Field names must not contain NUL characters (U+0000) or unpaired UTF-16 surrogates.',
      ),
    );
  };
  for (let i = 0; i < nodes.length && out.length < MAX_DETAILS; i++) {
    const v = nodes[i]!.value;
    if (typeof v === 'string') {
      if (hasInvalidCharacters(v)) report(i);
      else if (isNameField(nodes, i) && CONTROL.test(v))
        out.push(detail(pathOf(i), 'invalid_characters', 'Names and labels must not contain control characters (U+0000 to U+001F, U+007F to U+009F).'));
    } else if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++)
        if (v[k] !== null && typeof v[k] !== 'number' && typeof v[k] !== 'boolean') nodes.push({ value: v[k], parent: i, key: k });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (hasInvalidCharacters(k)) report(i, k);
        if (x !== null && typeof x !== 'number' && typeof x !== 'boolean') nodes.push({ value: x, parent: i, key: k });
      }
    }
  }
  return out.slice(0, MAX_DETAILS);
}
