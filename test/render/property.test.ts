/**
 * Property tests over random valid trees and hostile values: the renderer never throws, the HTML
 * parses without a single parse error, uses only the email-safe elements and attributes, links only
 * to allowed schemes, and every smart-field value lands whole inside one text node (no value can
 * open, close or split an element).
 */
import crypto from 'node:crypto';
import fc from 'fast-check';
import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { describe, expect, it } from 'vitest';
import { cleanValue } from '../../src/text.ts';
import { renderSignature } from '../../src/render/render.ts';
import { validateContent } from '../../src/render/validate.ts';
import { CLOSE, OPEN, validTree, values } from './arbitraries.ts';
import { smartFieldIds, smartFieldKinds } from './helpers.ts';

type Node = DefaultTreeAdapterMap['node'];
type Element = DefaultTreeAdapterMap['element'];

const ALLOWED: Record<string, readonly string[]> = {
  table: ['role', 'cellpadding', 'cellspacing', 'width', 'bgcolor', 'style'],
  tbody: [],
  tr: [],
  td: ['style', 'width', 'height', 'valign', 'bgcolor'],
  span: ['style', 'dir'],
  a: ['href', 'style'],
  img: ['src', 'width', 'height', 'alt', 'style'],
  br: [],
};
const TEXT_PARENTS = new Set(['td', 'span', 'a']);
const LINK = /^(?:https?:\/\/[^/?#\s]|mailto:|tel:)/;

function parseDocument(html: string): { body: Element; errors: string[] } {
  const errors: string[] = [];
  const doc = parse(`<!DOCTYPE html><html><head><title>t</title></head><body>${html}</body></html>`, {
    onParseError: (e) => errors.push(`${e.code} at ${e.startOffset}`),
  });
  const htmlEl = doc.childNodes.find((n) => n.nodeName === 'html') as Element;
  const body = htmlEl.childNodes.find((n) => n.nodeName === 'body') as Element;
  return { body, errors };
}

/** Every problem with the parsed signature; [] when it is email-safe. */
function inspect(body: Element, expected: Map<string, string>): string[] {
  const problems: string[] = [];
  const walk = (node: Node, parent: string) => {
    if (node.nodeName === '#text') {
      const value = (node as DefaultTreeAdapterMap['textNode']).value;
      if (!TEXT_PARENTS.has(parent)) problems.push(`text ${JSON.stringify(value.slice(0, 40))} directly inside <${parent}>`);
      // Sentinel-wrapped values must open and close within this one text node, whole and unchanged.
      let at = 0;
      for (;;) {
        const open = value.indexOf(OPEN, at);
        const close = value.indexOf(CLOSE, at);
        if (open < 0 && close < 0) break;
        if (open < 0 || (close >= 0 && close < open)) {
          problems.push(`a value closes without opening in ${JSON.stringify(value.slice(0, 60))}`);
          break;
        }
        const end = value.indexOf(CLOSE, open + 1);
        const nextOpen = value.indexOf(OPEN, open + 1);
        if (end < 0 || (nextOpen >= 0 && nextOpen < end)) {
          problems.push(`a value is split across elements: ${JSON.stringify(value.slice(open, open + 60))}`);
          break;
        }
        const segment = value.slice(open, end + 1);
        const fieldId = segment.slice(1, segment.indexOf(':'));
        if (expected.get(fieldId) !== segment)
          problems.push(`value of ${fieldId} altered: ${JSON.stringify(segment)} vs ${JSON.stringify(expected.get(fieldId))}`);
        at = end + 1;
      }
      return;
    }
    if (node.nodeName === '#comment') {
      problems.push('a comment');
      return;
    }
    const el = node as Element;
    const allowed = ALLOWED[el.tagName];
    if (!allowed) {
      problems.push(`element <${el.tagName}>`);
      return;
    }
    for (const a of el.attrs) {
      if (!allowed.includes(a.name)) problems.push(`attribute ${a.name} on <${el.tagName}>`);
      if (a.value.includes(OPEN) || a.value.includes(CLOSE)) problems.push(`a value inside the ${a.name} attribute of <${el.tagName}>`);
      if (a.name === 'href' && !LINK.test(a.value)) problems.push(`href ${a.value}`);
      if (a.name === 'src' && !/^https?:\/\//.test(a.value)) problems.push(`src ${a.value}`);
      if (a.name === 'dir' && a.value !== 'ltr' && a.value !== 'rtl') problems.push(`dir ${a.value}`);
      if (a.name === 'bgcolor' && !/^(?:#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-z]+)$/.test(a.value)) problems.push(`bgcolor ${a.value}`);
      if (a.name === 'style' && /[<>"]|url\(|expression/i.test(a.value)) problems.push(`style ${a.value}`);
    }
    for (const c of el.childNodes) walk(c, el.tagName);
  };
  for (const c of body.childNodes) walk(c, 'body');
  return problems;
}

describe('renderer properties', () => {
  it('random valid trees validate (the generator is sound)', () => {
    fc.assert(
      fc.property(validTree, (tree) => {
        const r = validateContent(tree, { field: 'tree', smartFieldIds });
        expect(r.ok ? [] : r.details).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws, parses as HTML without errors, and no value escapes its text node', () => {
    fc.assert(
      fc.property(validTree, values, (tree, vals) => {
        const out = renderSignature({ tree, values: vals, smartFieldKinds, signatureId: 'sig' });
        expect(typeof out.text).toBe('string');
        expect(out.hash).toBe(crypto.createHash('sha256').update(out.html).digest('hex'));
        expect(out.html).not.toMatch(/[\u0080-\uffff]/);
        if (!out.html) return;
        const { body, errors } = parseDocument(out.html);
        expect(errors).toEqual([]);
        const expected = new Map(Object.entries(vals).map(([k, v]) => [k, cleanValue(v)]));
        expect(inspect(body, expected)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('renders the same bytes for the same input, whatever the order of the values', () => {
    fc.assert(
      fc.property(validTree, values, (tree, vals) => {
        const a = renderSignature({ tree, values: vals, smartFieldKinds, signatureId: 'sig' });
        const reversed = Object.fromEntries(Object.entries(vals).reverse());
        const b = renderSignature({ tree: structuredClone(tree), values: new Map(Object.entries(reversed)), smartFieldKinds, signatureId: 'sig' });
        expect(b.html).toBe(a.html);
        expect(b.text).toBe(a.text);
        expect(b.hash).toBe(a.hash);
      }),
      { numRuns: 200 },
    );
  });
});
