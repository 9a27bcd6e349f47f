/**
 * The job catalogue (src/jobs/catalogue.ts) is the one place that names a job: every other file of
 * src/ reaches a job through its entry (`jobs.installMailbox`, `enqueue`), never through its name as
 * a string, and each task of the worker is defined from its entry. The helpers that request jobs
 * live in src/jobs/ (triggers.ts): no file of src/ outside it calls `enqueue` or `enqueueMany`.
 */
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { jobs } from '../../src/jobs/catalogue.ts';
import { tasks } from '../../src/tasks/index.ts';
import { readSources, stripComments } from './scan.ts';

const CATALOGUE = 'src/jobs/catalogue.ts';
const NAMES = Object.values(jobs).map((j) => j.name);

const isModuleSpecifier = (node: ts.Node) =>
  ts.isImportDeclaration(node.parent) ||
  ts.isExportDeclaration(node.parent) ||
  (ts.isCallExpression(node.parent) && node.parent.expression.kind === ts.SyntaxKind.ImportKeyword);

/** The text of every string literal and template literal part of a TypeScript source (comments and module specifiers left out). */
function stringsOf(file: string, text: string): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node) && isModuleSpecifier(node)) return;
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) out.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return out;
}

/** Where a job's name is written as a string outside the catalogue: the string itself, or a word of one (SQL). */
export function namedJobs(sources: Record<string, string>, names: readonly string[] = NAMES): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    if (file === CATALOGUE || !file.startsWith('src/')) continue;
    for (const s of stringsOf(file, text)) {
      for (const name of names) {
        if (new RegExp(`(^|[^\\w-])${name}([^\\w-]|$)`).test(s))
          problems.push(`${file}: names the job ${name} (${JSON.stringify(s.trim().slice(0, 80))}); use jobs.* from ${CATALOGUE}`);
      }
    }
  }
  return problems;
}

/** Where a file of src/ outside src/jobs/ adds a job itself (`enqueue(`, `enqueueMany(`) instead of calling a request helper. */
export function enqueuesOutsideJobs(sources: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(sources)) {
    if (!file.startsWith('src/') || file.startsWith('src/jobs/')) continue;
    for (const m of stripComments(text).matchAll(/\b(enqueue|enqueueMany)\s*(?:<[^>(]*>)?\s*\(/g)) {
      problems.push(`${file}: calls ${m[1]}; request the job through a helper of src/jobs/triggers.ts`);
    }
  }
  return problems;
}

describe('the job catalogue', () => {
  it('no file of src/ but the catalogue names a job', () => {
    expect(namedJobs(readSources())).toEqual([]);
  });

  it('a job name in a string or in SQL elsewhere is reported, naming the file', () => {
    const rogue = {
      'src/db/rogue.ts': "await db.query(`select graphile_worker.add_job('sync_seats', $1::json)`, [p]);",
      'src/cli/rogue.ts': "await startWorker(ctx, { only: ['sync_integration'] });",
      'src/db/fine.ts': '// a comment may say sync_seats; a key prefix `seats:` is no name\nconst k = `seats:${id}`;',
    };
    expect(namedJobs(rogue)).toEqual([
      `src/db/rogue.ts: names the job sync_seats ("select graphile_worker.add_job('sync_seats', $1::json)"); use jobs.* from ${CATALOGUE}`,
      `src/cli/rogue.ts: names the job sync_integration ("sync_integration"); use jobs.* from ${CATALOGUE}`,
    ]);
  });

  it('no file of src/ outside src/jobs/ adds a job itself: the request helpers are in one home', () => {
    expect(enqueuesOutsideJobs(readSources())).toEqual([]);
  });

  it('an enqueue outside src/jobs/ is reported, naming the file; a request helper, a comment or src/jobs/ itself is not', () => {
    const planted = {
      'src/billing/rogue.ts': 'if (rowCount) await enqueue(db, jobs.syncSeats, { workspaceId, runId });',
      'src/install/rogue.ts': 'await enqueueMany<typeof s>(c, jobs.installMailbox, items);',
      'src/sync/fine.ts': '// enqueue(db, ...) in a comment\nawait requestSeatSync(client, workspaceId, runId);',
      'src/jobs/triggers.ts': 'await enqueue(db, jobs.syncSeats, { workspaceId, runId });',
    };
    expect(enqueuesOutsideJobs(planted)).toEqual([
      'src/billing/rogue.ts: calls enqueue; request the job through a helper of src/jobs/triggers.ts',
      'src/install/rogue.ts: calls enqueueMany; request the job through a helper of src/jobs/triggers.ts',
    ]);
  });

  it('every job has one task, defined from its entry', () => {
    expect(tasks.map((t) => t.name).sort()).toEqual([...NAMES].sort());
    for (const entry of Object.values(jobs)) expect(tasks.find((t) => t.name === entry.name)?.payload).toBe(entry.payload);
  });

  it('names are unique', () => {
    expect(new Set(NAMES).size).toBe(NAMES.length);
  });
});
