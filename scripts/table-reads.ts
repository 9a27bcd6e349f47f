/**
 * Counts where the house leaks: for each table, the files outside its owner's folder (and the
 * read models allowed to join it) whose SQL names it; the SQL statements in src/cli/ and src/tasks/;
 * the SQL strings a module exports for others to splice. The owners and read models are the ones
 * test/architecture/ownership.test.ts checks against (test/architecture/owners.ts).
 *
 *   npx node scripts/table-reads.ts            # one JSON line of counts
 *   npx node scripts/table-reads.ts --files    # and, per table, the files
 */
import { OWNERS, READ_MODELS, ownerFolder } from '../test/architecture/owners.ts';
import { migrationTables, namers, readSources, strays, stripComments } from '../test/architecture/scan.ts';

const sources = readSources();
const tables = [...new Set(migrationTables())];
const outside = Object.fromEntries(strays(namers(sources, tables), ownerFolder, READ_MODELS));
const statement = /\b(select\s[\s\S]*?\sfrom|insert\s+into|update\s+\w+\s+set|delete\s+from|with\s+\w+\s+as\s*\()\s/gi;
const sqlIn = (prefix: string) =>
  Object.entries(sources)
    .filter(([f]) => f.startsWith(prefix))
    .map(([f, t]) => ({ file: f, statements: [...stripComments(t).matchAll(statement)].length }))
    .filter((x) => x.statements > 0);
// An exported const or function named *Sql, or whose value is SQL text (`export const x = \`select ...`).
const exportedSql = Object.entries(sources).flatMap(([f, t]) => {
  const text = stripComments(t);
  const named = [...text.matchAll(/export\s+(?:const|function)\s+(\w+(?:Sql|SQL))\b/g)].map((m) => m[1]!);
  const valued = [...text.matchAll(/export\s+const\s+(\w+)\s*=\s*`\s*(?:select|insert|update|delete|with)\b/gi)].map((m) => m[1]!);
  return [...new Set([...named, ...valued])].map((name) => `${f}: ${name}`);
});
const counts = Object.fromEntries(
  Object.entries(outside)
    .sort((a, b) => b[1].length - a[1].length)
    .map(([t, fs]) => [t, fs.length]),
);
const files = new Set(Object.values(outside).flat());
const cli = sqlIn('src/cli/');
const tasks = sqlIn('src/tasks/');
const figures = {
  files_naming_another_owners_table: files.size,
  per_table: counts,
  sql_statements_in_cli: cli.reduce((a, x) => a + x.statements, 0),
  sql_statements_in_tasks: tasks.reduce((a, x) => a + x.statements, 0),
  exported_sql_strings: exportedSql.length,
  tables_without_owner: tables.filter((t) => !OWNERS[t]),
};
console.log(JSON.stringify(figures));
if (process.argv.includes('--files')) {
  for (const [t, fs] of Object.entries(outside)) console.log(`${t} (owner ${OWNERS[t]}):\n  ${fs.join('\n  ')}`);
  for (const x of [...cli, ...tasks]) console.log(`SQL in ${x.file}: ${x.statements}`);
  for (const e of exportedSql) console.log(`exported SQL: ${e}`);
}
