/**
 * Routes parse, call an owner module and answer: no file of src/api/ runs a query or writes SQL.
 * Reads live in the owning aggregate's module (docs/architecture.md, "Who writes which table").
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { readSources } from './scan.ts';

/**
 * SQL in a string: a statement (`select ... from t ... where|join|limit|order by|$n`, `insert into`, `delete from`, `update t set`), or a `from t
 * where|join` fragment.
 */
const SQL =
  /\bselect\b[\s\S]*\bfrom\s+\w+[\s\S]*(\bwhere\b|\bjoin\b|\blimit\b|\border\s+by\b|\$\d)|\binsert\s+into\s+\w+|\bdelete\s+from\s+\w+|\bupdate\s+\w+\s+set\b|^\s*from\s+\w+(\s+\w+)?\s+(where|join|left|order)\b/i;

/** Where a file of src/api/ queries the database or holds SQL. */
export function sqlInRoutes(sources: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    if (!file.startsWith('src/api/')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'query') {
        problems.push(`${at(node)}: runs a query; call the owner's module`);
      } else if ((ts.isStringLiteralLike(node) || ts.isTemplateHead(node)) && SQL.test(node.text)) {
        problems.push(`${at(node)}: holds SQL (${JSON.stringify(node.text.trim().slice(0, 60))}); move it to the owner's module`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return problems;
}

describe('thin routes', () => {
  it('no file of src/api/ runs a query or holds SQL', () => {
    expect(sqlInRoutes(readSources())).toEqual([]);
  });

  it('a query or a SQL fragment in a route is reported, with its line', () => {
    const rogue = {
      'src/api/v1/rogue.ts': [
        "const { rows } = await app.pool.query('select id from teammates where workspace_id = $1', [w]);",
        "const page = await listPage(app.pool, req.query, w, COLUMNS, 'from teammates t where t.workspace_id = $1');",
        "const fine = req.query.kind; reply.send('Select a file from the list.');",
      ].join('\n'),
    };
    expect(sqlInRoutes(rogue)).toEqual([
      "src/api/v1/rogue.ts:1: runs a query; call the owner's module",
      'src/api/v1/rogue.ts:1: holds SQL ("select id from teammates where workspace_id = $1"); move it to the owner\'s module',
      'src/api/v1/rogue.ts:2: holds SQL ("from teammates t where t.workspace_id = $1"); move it to the owner\'s module',
    ]);
  });
});
