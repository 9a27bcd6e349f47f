/**
 * Golden files: each fixtures/render/cases/<case>/input.json (tree, values, optional campaign,
 * variant and assets) next to the exact expected.html and expected.txt. A change in output bytes
 * is a visible diff in review. After an intended change, regenerate with
 * `UPDATE_GOLDEN=1 npx vitest run test/render/golden.test.ts` and read the diff.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateContent } from '../../src/render/validate.ts';
import { CASES, renderCase, smartFieldIds, type GoldenInput } from './helpers.ts';

const update = process.env.UPDATE_GOLDEN === '1';

describe('golden renders', () => {
  const names = fs.readdirSync(CASES).sort();

  it('covers every block type, hidden blocks, links with query parameters, lists, social icons and hostile values', () => {
    expect(names).toEqual(
      expect.arrayContaining(['blocks-and-styles', 'empty-fields', 'fixture-template', 'hidden-blocks', 'hostile-values', 'links', 'social']),
    );
    const types = new Set<string>();
    for (const n of names) {
      JSON.stringify(JSON.parse(fs.readFileSync(path.join(CASES, n, 'input.json'), 'utf8')).tree, (k, v: unknown) => {
        if (k === 'type' && typeof v === 'string') types.add(v);
        return v;
      });
    }
    expect([...types].sort()).toEqual(['list', 'listItem', 'listItemLabel', 'socialList', 'socialListItem', 'stack', 'text', 'textToken']);
  });

  for (const name of names) {
    it(`${name}: renders exactly the expected HTML and text`, () => {
      const dir = path.join(CASES, name);
      const input = JSON.parse(fs.readFileSync(path.join(dir, 'input.json'), 'utf8')) as GoldenInput;
      const checked = validateContent(input.tree, { field: 'tree', smartFieldIds });
      expect(checked.ok ? [] : checked.details).toEqual([]);
      if (input.campaign) expect(validateContent(input.campaign.content, { field: 'campaign', smartFieldIds }).ok).toBe(true);
      const out = renderCase(input);
      const htmlFile = path.join(dir, 'expected.html');
      const textFile = path.join(dir, 'expected.txt');
      if (update) {
        fs.writeFileSync(htmlFile, out.html + '\n');
        fs.writeFileSync(textFile, out.text + '\n');
      }
      expect(out.html + '\n').toBe(fs.readFileSync(htmlFile, 'utf8'));
      expect(out.text + '\n').toBe(fs.readFileSync(textFile, 'utf8'));
    });
  }
});
