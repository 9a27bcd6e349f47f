/**
 * Content-tree validation: strictness, referential checks, the spec's error shape with field paths,
 * and robustness: 1,000 random invalid trees and arbitrary JSON give details, never a throw.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { contentTreeJsonSchema, buildExample } from '../../src/render/contentSchema.ts';
import { contentTreeSchema, LIMITS } from '../../src/render/schema.ts';
import { validateContent } from '../../src/render/validate.ts';
import { fieldPath } from '../../src/errors.ts';
import { validTree } from './arbitraries.ts';
import { sf, smartFieldIds, smartFields, template, campaign } from './helpers.ts';

const FIELD = 'signature.draft_content';
const validate = (tree: unknown) => validateContent(tree, { field: FIELD, smartFieldIds });
const details = (tree: unknown) => {
  const r = validate(tree);
  if (r.ok) throw new Error('expected the tree to be invalid');
  return r.details;
};

const textBlock = (token: Record<string, unknown>) => ({ type: 'text', tokens: [{ type: 'textToken', ...token }] });
const root = (...children: unknown[]) => ({ type: 'stack', children });

describe('validateContent', () => {
  it('accepts the fixture template, the campaign banner and the content_schema example', () => {
    expect(validate(template())).toMatchObject({ ok: true });
    expect(validate(campaign().content)).toMatchObject({ ok: true });
    expect(validate(buildExample(smartFields))).toMatchObject({ ok: true });
    expect(validateContent(buildExample([]), { field: FIELD, smartFieldIds: new Set() })).toMatchObject({ ok: true });
  });

  it('returns the tree as sent, without added defaults', () => {
    const tree = template();
    const r = validate(structuredClone(tree));
    expect(r.ok && r.tree).toEqual(tree);
  });

  it('pinpoints a font size out of range with the full field path and the allowed range', () => {
    const tree = root(textBlock({ value: 'a' }), textBlock({ value: 'b' }), textBlock({ value: 'c', textStyle: { fontSize: 400 } }));
    expect(details(tree)).toEqual([
      {
        field: 'signature.draft_content.children[2].tokens[0].textStyle.fontSize',
        code: 'too_big',
        message: 'Must be at most 72.',
        allowed: [LIMITS.fontSize],
        missing: [],
      },
    ]);
  });

  it('rejects unknown keys, listing the keys that are allowed', () => {
    const [d] = details(root(textBlock({ value: 'a', colour: 'red' })));
    expect(d).toMatchObject({ field: `${FIELD}.children[0].tokens[0].colour`, code: 'unknown_field' });
    expect(d!.allowed).toEqual(['id', 'type', 'value', 'smartFieldUuid', 'assetUuid', 'textStyle', 'href']);
    const [b] = details({ type: 'stack', children: [], blockStyle: { margin: 4 } });
    expect(b).toMatchObject({ field: `${FIELD}.blockStyle.margin`, code: 'unknown_field' });
    expect(b!.allowed).toContain('marginTop');
  });

  it('rejects unknown block types and blocks out of place, with the types allowed there', () => {
    expect(details(root({ type: 'image', src: 'x' }))[0]).toMatchObject({
      field: `${FIELD}.children[0].type`,
      code: 'invalid_value',
      allowed: ['stack', 'text', 'list', 'socialList', 'optOut'],
    });
    expect(details(root({ type: 'list', children: [textBlock({ value: 'x' })] }))[0]).toMatchObject({
      field: `${FIELD}.children[0].children[0].type`,
      allowed: ['listItem'],
    });
    expect(details(root({ type: 'socialList', children: [{ type: 'listItem', tokens: [] }] }))[0]).toMatchObject({ allowed: ['socialListItem'] });
    expect(details(textBlock({ value: 'x' }))[0]).toMatchObject({ field: `${FIELD}.type`, allowed: ['stack'] });
    expect(details(root({ children: [] }))[0]).toMatchObject({ field: `${FIELD}.children[0].type`, code: 'required', missing: ['type'] });
  });

  it('reports missing members in `missing`', () => {
    expect(details({ type: 'stack' })).toEqual([
      { field: `${FIELD}.children`, code: 'required', message: 'children is required.', allowed: [], missing: ['children'] },
    ]);
    expect(details(root({ type: 'text', tokens: [{ type: 'textToken' }] }))[0]).toMatchObject({
      field: `${FIELD}.children[0].tokens[0]`,
      code: 'required',
      missing: ['value'],
    });
    expect(details(root(textBlock({ value: 'x', href: {} })))[0]).toMatchObject({
      field: `${FIELD}.children[0].tokens[0].href`,
      code: 'required',
      missing: ['text'],
    });
  });

  it('refuses javascript:, data: and relative links', () => {
    for (const text of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      'data:text/html,<b>',
      '/relative',
      'www.acme.example',
      'https://a.example/x y',
      'ftp://files.example',
    ]) {
      expect(details(root(textBlock({ value: 'x', href: { text } })))[0], text).toMatchObject({
        field: `${FIELD}.children[0].tokens[0].href.text`,
        code: 'invalid_href',
        allowed: ['https:', 'http:', 'mailto:', 'tel:'],
      });
    }
    for (const text of ['https://acme.example/a?b=c', 'http://acme.example', 'mailto:', 'mailto:ada@acme.example', 'tel:+44 20 7946 0018']) {
      expect(validate(root(textBlock({ value: 'x', href: { text } }))).ok, text).toBe(true);
    }
  });

  it('accepts CSS colours and refuses anything else', () => {
    for (const color of [
      '#fff',
      '#FFFA',
      '#0b2545',
      '#0b2545cc',
      'rgb(1, 2, 3)',
      'rgba(1,2,3,0.5)',
      'hsl(210, 50%, 40%)',
      'hsla(210deg, 50%, 40%, 1)',
      'rebeccapurple',
      'transparent',
    ]) {
      expect(validate(root(textBlock({ value: 'x', textStyle: { color } }))).ok, color).toBe(true);
    }
    for (const color of ['red;background:url(x)', 'expression(alert(1))', '#12', 'Red', 'blurple', 'rgb(1,2)', 'var(--x)', '']) {
      expect(details(root(textBlock({ value: 'x', textStyle: { color } })))[0], color).toMatchObject({
        field: `${FIELD}.children[0].tokens[0].textStyle.color`,
        code: 'invalid_color',
      });
    }
    expect(details({ type: 'stack', children: [], blockStyle: { backgroundColor: 'url(x)' } })[0]).toMatchObject({
      field: `${FIELD}.blockStyle.backgroundColor`,
    });
  });

  it('bounds every size', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ marginTop: 201 }, 'marginTop'],
      [{ paddingLeft: -1 }, 'paddingLeft'],
      [{ gap: 1e9 }, 'gap'],
      [{ width: 0 }, 'width'],
      [{ width: 1001 }, 'width'],
    ];
    for (const [blockStyle, key] of cases) expect(details({ type: 'stack', children: [], blockStyle })[0]?.field).toBe(`${FIELD}.blockStyle.${key}`);
    expect(details(root(textBlock({ value: 'x', textStyle: { lineHeight: 10 } })))[0]).toMatchObject({ allowed: [LIMITS.lineHeight] });
    expect(details(root(textBlock({ value: 'x', textStyle: { fontSize: Number.NaN } })))[0]?.field).toBe(`${FIELD}.children[0].tokens[0].textStyle.fontSize`);
    expect(details(root(textBlock({ value: 'x'.repeat(LIMITS.maxValueLength + 1) })))[0]).toMatchObject({ code: 'too_big' });
    expect(
      details(root({ type: 'socialList', iconSize: 100, children: [{ type: 'socialListItem', network: 'x', href: { text: 'https://x.com' } }] }))[0]?.field,
    ).toBe(`${FIELD}.children[0].iconSize`);
    expect(details(root(...Array.from({ length: LIMITS.maxChildren + 1 }, () => textBlock({ value: 'x' }))))[0]).toMatchObject({
      field: `${FIELD}.children`,
      code: 'too_big',
    });
  });

  it('requires every smart field to exist in the workspace, wherever it is referenced', () => {
    const ghost = '00000000-0000-4000-8000-00000000dead';
    const tree = root(
      textBlock({ smartFieldUuid: ghost }),
      textBlock({ value: 'x', href: { text: 'https://a.example', smartFieldUuid: ghost, queryParams: [{ key: 'k', values: [{ smartFieldUuid: ghost }] }] } }),
      { type: 'socialList', children: [{ type: 'socialListItem', network: 'linkedin', href: { smartFieldUuid: ghost } }] },
    );
    const ds = details(tree);
    expect(ds.map((d) => d.field)).toEqual([
      `${FIELD}.children[0].tokens[0].smartFieldUuid`,
      `${FIELD}.children[1].tokens[0].href.smartFieldUuid`,
      `${FIELD}.children[1].tokens[0].href.queryParams[0].values[0].smartFieldUuid`,
      `${FIELD}.children[2].children[0].href.smartFieldUuid`,
    ]);
    expect(ds[0]).toMatchObject({ code: 'unknown_smart_field' });
    expect(ds[0]!.allowed).toEqual(expect.arrayContaining([sf.first_name]));
    expect(validate(root(textBlock({ smartFieldUuid: sf.first_name }))).ok).toBe(true);
  });

  it('bounds nesting depth, and survives absurd nesting without recursion', () => {
    let ok: unknown = { type: 'stack', children: [] };
    for (let i = 1; i < LIMITS.maxDepth; i++) ok = root(ok);
    expect(validate(ok).ok).toBe(true);
    expect(details(root(ok))[0]).toMatchObject({ code: 'too_deep', allowed: [{ maximum: LIMITS.maxDepth }] });
    let absurd: unknown = [];
    for (let i = 0; i < 200_000; i++) absurd = { type: 'stack', children: [absurd] };
    expect(details(absurd)[0]).toMatchObject({ code: 'too_deep' });
  });

  it('bounds the number of blocks', () => {
    const wide = root(...Array.from({ length: 50 }, () => root(...Array.from({ length: 12 }, () => textBlock({ value: 'x' })))));
    expect(details(wide)[0]).toMatchObject({ code: 'too_large', allowed: [{ maximum: LIMITS.maxBlocks }] });
  });

  it('never throws on values that are not JSON trees', () => {
    const cyclic: Record<string, unknown> = { type: 'stack' };
    cyclic.children = [cyclic];
    const throwing = {
      type: 'stack',
      get children(): unknown[] {
        throw new Error('boom');
      },
    };
    for (const v of [undefined, null, 0, 'stack', [], [root()], cyclic, throwing, Object.create(null), new Map(), () => 1, Symbol('x'), 10n]) {
      const r = validate(v);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.details[0]!.field.startsWith(FIELD)).toBe(true);
    }
  });

  it('formats paths the way the spec shows them', () => {
    expect(fieldPath(['children', 2, 'tokens', 0, 'textStyle', 'fontSize'], 'signature.draft_content')).toBe(
      'signature.draft_content.children[2].tokens[0].textStyle.fontSize',
    );
    expect(fieldPath(['a b'], 'x')).toBe('x["a b"]');
  });
});

describe('the JSON Schema of content_schema', () => {
  it('is generated from the validator schema itself', () => {
    expect(contentTreeJsonSchema()).toEqual(z.toJSONSchema(contentTreeSchema));
  });

  it('is strict and carries the same bounds and patterns', () => {
    const s = JSON.stringify(contentTreeJsonSchema());
    expect(s).toContain('"additionalProperties":false');
    expect(s).not.toContain('"additionalProperties":true');
    const defs = (contentTreeJsonSchema() as { $defs: Record<string, { properties: Record<string, Record<string, unknown>> }> }).$defs;
    expect(defs.textStyle!.properties.fontSize).toMatchObject({ minimum: 6, maximum: 72 });
    expect(defs.href!.properties.text!.pattern).toBeTypeOf('string');
    expect(new RegExp(defs.href!.properties.text!.pattern as string).test('javascript:alert(1)')).toBe(false);
    expect(defs.color).toMatchObject({ type: 'string', pattern: expect.any(String) });
  });
});

// ---------------------------------------------------------------------------------------------
// 1,000 random invalid trees

type Json = Record<string, unknown> | unknown[];

/** Every object inside a tree with its path. */
function objectsOf(tree: unknown): { path: (string | number)[]; obj: Record<string, unknown> }[] {
  const out: { path: (string | number)[]; obj: Record<string, unknown> }[] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (v && typeof v === 'object') {
      out.push({ path, obj: v as Record<string, unknown> });
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
    }
  };
  walk(tree, []);
  return out;
}

interface Mutation {
  name: string;
  /** Applies the mutation in place; returns the path that must be reported, or undefined if not applicable. */
  apply(tree: Json, pick: number): (string | number)[] | undefined;
}

const choose = <T>(xs: T[], pick: number): T | undefined => (xs.length ? xs[pick % xs.length] : undefined);

const MUTATIONS: Mutation[] = [
  {
    name: 'unknown key',
    apply: (tree, pick) => {
      const t = choose(objectsOf(tree), pick);
      if (!t) return undefined;
      t.obj.onclick = 'alert(1)';
      return [...t.path, 'onclick'];
    },
  },
  {
    name: 'number out of range',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => o.path.at(-1) === 'textStyle' || o.path.at(-1) === 'blockStyle'),
        pick,
      );
      if (!t) return undefined;
      const key = t.path.at(-1) === 'textStyle' ? 'fontSize' : 'paddingTop';
      t.obj[key] = pick % 2 ? 10_000 : -5;
      return [...t.path, key];
    },
  },
  {
    name: 'number as string',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => o.path.at(-1) === 'blockStyle'),
        pick,
      );
      if (!t) return undefined;
      t.obj.width = '100px';
      return [...t.path, 'width'];
    },
  },
  {
    name: 'bad colour',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => o.path.at(-1) === 'textStyle'),
        pick,
      );
      if (!t) return undefined;
      t.obj.color = 'red;background:url(https://evil.example)';
      return [...t.path, 'color'];
    },
  },
  {
    name: 'javascript: link',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => o.path.at(-1) === 'href'),
        pick,
      );
      if (!t) return undefined;
      t.obj.text = 'javascript:alert(document.cookie)';
      return [...t.path, 'text'];
    },
  },
  {
    name: 'unknown smart field',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => typeof o.obj.smartFieldUuid === 'string'),
        pick,
      );
      if (!t) return undefined;
      t.obj.smartFieldUuid = '00000000-0000-4000-8000-00000000dead';
      return [...t.path, 'smartFieldUuid'];
    },
  },
  {
    name: 'bad block type',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => typeof o.obj.type === 'string' && o.obj.type !== 'textToken'),
        pick,
      );
      if (!t) return undefined;
      t.obj.type = pick % 2 ? 'script' : 'Stack';
      return [...t.path, 'type'];
    },
  },
  {
    name: 'missing required member',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => Array.isArray(o.obj.children) || Array.isArray(o.obj.tokens)),
        pick,
      );
      if (!t) return undefined;
      const key = Array.isArray(t.obj.children) ? 'children' : 'tokens';
      delete t.obj[key];
      return [...t.path, key];
    },
  },
  {
    name: 'node replaced by a scalar',
    apply: (tree, pick) => {
      const t = choose(
        objectsOf(tree).filter((o) => o.path.length > 0 && o.path.at(-2) === 'children'),
        pick,
      );
      if (!t) return undefined;
      const parent = objectsOf(tree).find((o) => JSON.stringify(o.path) === JSON.stringify(t.path.slice(0, -2)))!;
      (parent.obj.children as unknown[])[t.path.at(-1) as number] = pick % 3 === 0 ? null : pick % 3 === 1 ? 42 : 'text';
      return t.path;
    },
  },
];

describe('1,000 random invalid trees', () => {
  it('each gives 422 details with a field path naming the broken member, and never throws', () => {
    let applied = 0;
    fc.assert(
      fc.property(validTree, fc.nat(), fc.nat(), (valid, which, pick) => {
        const tree = structuredClone(valid) as unknown as Json;
        const order = [...MUTATIONS.slice(which % MUTATIONS.length), ...MUTATIONS.slice(0, which % MUTATIONS.length)];
        let path: (string | number)[] | undefined;
        for (const m of order) {
          path = m.apply(tree, pick);
          if (path) break;
        }
        if (!path) path = MUTATIONS[0]!.apply(tree, 0)!;
        applied++;
        const r = validateContent(tree, { field: FIELD, smartFieldIds });
        expect(r.ok).toBe(false);
        if (r.ok) return;
        const err = ApiError.validation(r.details);
        expect(err.status).toBe(422);
        const body = err.toBody() as { details: { field: string; code: string; message: string; allowed: unknown[]; missing: string[] }[] };
        expect(body.details.length).toBeGreaterThan(0);
        for (const d of body.details) {
          expect(d.field.startsWith(FIELD)).toBe(true);
          expect(d.field).toMatch(/^signature\.draft_content(\.[A-Za-z_$][\w$]*|\[\d+\]|\["[^"]*"\])*$/);
          expect(typeof d.code).toBe('string');
          expect(d.message.length).toBeGreaterThan(0);
          expect(Array.isArray(d.allowed) && Array.isArray(d.missing)).toBe(true);
        }
        const expected = fieldPath(path, FIELD);
        expect(body.details.map((d) => d.field).some((f) => f === expected || f.startsWith(`${expected}.`) || f.startsWith(`${expected}[`))).toBe(true);
      }),
      { numRuns: 1000 },
    );
    expect(applied).toBe(1000);
  });

  it('arbitrary JSON never throws and always answers with a path', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const r = validateContent(v, { field: FIELD, smartFieldIds });
        if (!r.ok) expect(r.details.every((d) => d.field.startsWith(FIELD))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
