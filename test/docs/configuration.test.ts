/**
 * docs/configuration.md documents every variable that src/config.ts reads, and nothing that no
 * code reads; the README's short table copies its rows word for word, so the two cannot drift.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

/** The variables of the zod schema in src/config.ts (its top-level keys). */
export function configVariables(source: string): string[] {
  const start = source.indexOf('const schema = z.object({');
  const end = source.indexOf('\n});', start);
  if (start === -1 || end === -1) throw new Error('src/config.ts: no `const schema = z.object({ ... });` found');
  return [...source.slice(start, end).matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
}

/** The rows of the markdown tables whose first cell is one `VARIABLE`, by variable. */
export function documentedRows(markdown: string): Map<string, string> {
  return new Map([...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|.*$/gm)].map((m) => [m[1]!, m[0]]));
}

/** Every .ts file under `dir`, concatenated. */
function sources(dir: string): string {
  return fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') || f.endsWith('.js'))
    .map((f) => fs.readFileSync(path.join(ROOT, dir, f), 'utf8'))
    .join('\n');
}

describe('documented configuration', () => {
  const variables = configVariables(read('src/config.ts'));
  const docs = documentedRows(read('docs/configuration.md'));

  it('reads the schema and the tables it checks', () => {
    expect(variables).toEqual(expect.arrayContaining(['DATABASE_URL', 'PORT', 'ENCRYPTION_KEY', 'RATE_LIMIT_API']));
    expect(configVariables('const schema = z.object({\n  A_B: z.string(),\n  nested: z.object({\n    INNER: z.string(),\n  }),\n});')).toEqual(['A_B']);
    expect([...documentedRows('| variable |\n|---|\n| `PORT` | `3000` | port |\n| not `X` | y |').keys()]).toEqual(['PORT']);
  });

  it('docs/configuration.md has a row for every variable of src/config.ts', () => {
    expect(variables.filter((v) => !docs.has(v))).toEqual([]);
  });

  it('every variable docs/configuration.md names is read by the code', () => {
    const code = sources('src') + sources('bin');
    expect([...docs.keys()].filter((v) => !code.includes(v))).toEqual([]);
  });

  it("the README's settings are rows of docs/configuration.md, word for word", () => {
    const readme = documentedRows(read('README.md'));
    expect(readme.size).toBeGreaterThan(5);
    for (const [v, row] of readme) expect(row, v).toBe(docs.get(v));
  });
});
