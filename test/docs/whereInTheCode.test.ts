/**
 * docs/architecture.md's "Where in the code" points at modules: every `folder/file.ts` it names
 * exists under src/, and every `exportedName` it names in a row is declared in that row's modules,
 * so a moved or renamed module shows here instead of leaving a reader at a dead end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The rows of the section's table: each one's module paths (under src/) and the names it cites. */
export function whereRows(markdown: string): { row: string; modules: string[]; names: string[] }[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Where in the code\n')) ?? '';
  return section
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| behaviour') && !l.startsWith('|---'))
    .map((row) => {
      const where = row.split(' | ').at(-1) ?? '';
      const spans = [...where.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const modules = spans.filter((s) => /^[\w/]+\.ts$/.test(s));
      return { row, modules, names: spans.filter((s) => /^[A-Za-z_]\w*$/.test(s)) };
    });
}

/** What is wrong with the rows: a module that does not exist, a name no module of its row declares. */
export function whereProblems(root: string, markdown: string): string[] {
  const rows = whereRows(markdown);
  if (rows.length === 0) return ['no "Where in the code" table'];
  const problems: string[] = [];
  for (const { row, modules, names } of rows) {
    if (modules.length === 0) problems.push(`names no module: ${row}`);
    const texts = modules.map((m, i) => {
      // A bare file name is one at the root of src/ (`log.ts`), or beside the path before it (`experiments/sequential.ts`, `bayes.ts`).
      const folder = path.dirname(
        modules
          .slice(0, i)
          .reverse()
          .find((p) => p.includes('/')) ?? '.',
      );
      const candidates = m.includes('/') ? [m] : [m, `${folder}/${m}`];
      const found = candidates.find((c) => fs.existsSync(path.join(root, 'src', c)));
      if (!found) problems.push(`src/${candidates.at(-1)} does not exist`);
      return found ? fs.readFileSync(path.join(root, 'src', found), 'utf8') : '';
    });
    for (const n of names)
      if (!texts.some((t) => new RegExp(`\\b(function|const|class|let)\\s+${n}\\b`).test(t)))
        problems.push(`${n} is declared in none of ${modules.join(', ')}`);
  }
  return problems;
}

describe('docs/architecture.md, "Where in the code"', () => {
  it('finds a missing module and a name its modules do not declare', () => {
    const doc = [
      '## Where in the code',
      '| behaviour | where |',
      '|---|---|',
      '| the guard | `sync/engine.ts` (`DEFAULT_GUARD`) |',
      '| gone | `sync/nowhere.ts` |',
      '| renamed | `sync/retry.ts` (`noSuchFunction`) |',
      '| a sibling | `experiments/analysis.ts`, with `bayes.ts` |',
      '## Development',
    ].join('\n');
    expect(whereProblems(ROOT, doc)).toEqual(['src/sync/nowhere.ts does not exist', 'noSuchFunction is declared in none of sync/retry.ts']);
  });

  it('every module and name it gives exists', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
    expect(whereRows(doc).length).toBeGreaterThanOrEqual(20);
    expect(whereProblems(ROOT, doc)).toEqual([]);
  });
});
