/**
 * Finds which source files write which tables: INSERT INTO, UPDATE, DELETE FROM, MERGE INTO,
 * TRUNCATE and COPY ... FROM statements naming a table, in the SQL strings of src/ and connectors/.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export function sourceFiles(dirs = ['src', 'connectors']): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts')) out.push(rel);
    }
  };
  dirs.forEach(walk);
  return out.sort();
}

/** Tables the migrations create and a later one does not drop (their Up sections, in order). */
export function migrationTables(): string[] {
  const dir = path.join(ROOT, 'migrations');
  const tables = new Set<string>();
  // The tables the Up sections leave, in file order: a table a later migration drops is gone (a
  // Down section's create puts back what its Up dropped, and is not counted).
  for (const f of fs.readdirSync(dir).sort()) {
    const up = fs.readFileSync(path.join(dir, f), 'utf8').split(/^-- Down Migration/m)[0]!;
    for (const m of up.matchAll(/create table (?:if not exists )?(\w+)|drop table (?:if exists )?([\w\s,]+?)(?:\s+cascade)?\s*;/gi)) {
      if (m[1]) tables.add(m[1].toLowerCase());
      else for (const t of m[2]!.split(',')) tables.delete(t.trim().toLowerCase());
    }
  }
  return [...tables];
}

/** table -> files that write it, for the given files' texts. */
export function writers(files: Record<string, string>, tables: string[]): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>(tables.map((t) => [t, new Set<string>()]));
  const write = /\b(insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?|copy)\s+(?:only\s+)?(?:public\.)?(\w+)/gi;
  for (const [file, text] of Object.entries(files)) {
    for (const m of text.matchAll(write)) found.get(m[2]!.toLowerCase())?.add(file);
  }
  return found;
}

export function readSources(): Record<string, string> {
  return Object.fromEntries(sourceFiles().map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]));
}

/** A source's text without its comments (block and line), so prose that says "from teammates" is not SQL. */
export const stripComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

/**
 * table -> files whose SQL names it: after FROM, JOIN, INTO, UPDATE, TABLE, EXISTS, USING or COPY,
 * the words a statement names a table with (reads and writes alike), comments left out.
 */
export function namers(files: Record<string, string>, tables: string[]): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>(tables.map((t) => [t, new Set<string>()]));
  const name = new RegExp(`\\b(?:from|join|into|update|table|exists|using|copy)\\s+(?:only\\s+)?(?:public\\.)?(${tables.join('|')})\\b`, 'gi');
  for (const [file, text] of Object.entries(files)) {
    for (const m of stripComments(text).matchAll(name)) found.get(m[1]!.toLowerCase())!.add(file);
  }
  return found;
}

/**
 * table -> the files whose SQL names it although they are neither in its owner's folder nor a read
 * model allowed to name it. `ownerFolder(table)` is undefined for a table without owner (reported apart).
 */
export function strays(
  found: Map<string, Set<string>>,
  ownerFolder: (table: string) => string | undefined,
  readModels: Record<string, readonly string[]>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [table, files] of found) {
    const folder = ownerFolder(table);
    const list = [...files].filter((f) => !(folder && f.startsWith(`${folder}/`)) && !readModels[f]?.includes(table)).sort();
    if (list.length) out.set(table, list);
  }
  return out;
}
