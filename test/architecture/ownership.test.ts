/**
 * Each table has one owner: the module that writes it (and emits its events in the same
 * transaction); routes, tasks and CLI commands call it. Its reads live with it: a statement that
 * names a table belongs in the owner's folder, or in a read model listed for that table
 * (test/architecture/owners.ts; docs/architecture.md, "Who owns which table" and "Read models").
 * A write from any other file of src/ or connectors/, or a read outside those, fails the test,
 * naming the owner to call.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/db/outbox.ts';
import { EVENT_OWNERS, OWNERS, READ_MODELS, ownerFolder } from './owners.ts';
import { migrationTables, namers, readSources, strays, writers } from './scan.ts';

/** A file that writes events (calls emitEvent or emitEventsFrom) and names an event type it does not own. */
export function eventProblems(files: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (file === 'src/db/outbox.ts' || !/\bemit(Event|EventsFrom|TeammateEvents)\(/.test(text)) continue;
    for (const type of EVENT_TYPES) {
      if (text.includes(`'${type}'`) && EVENT_OWNERS[type] !== file) problems.push(`${type}: written by ${file}, but its owner is ${EVENT_OWNERS[type]}`);
    }
  }
  return problems;
}

/** Problems with the writers found: a writer that is not the owner, a table without owner. */
export function ownershipProblems(found: Map<string, Set<string>>, owners = OWNERS): string[] {
  const problems: string[] = [];
  for (const [table, files] of found) {
    const owner = owners[table];
    if (!owner) {
      problems.push(`${table}: no owner; add it to OWNERS in test/architecture/ownership.test.ts and to docs/architecture.md`);
      continue;
    }
    for (const f of files) if (f !== owner) problems.push(`${table}: written by ${f}, but its owner is ${owner}`);
  }
  return problems;
}

/** Files naming a table outside its owner's folder and the read models, each reported with the owner to call. */
export function readProblems(files: Record<string, string>, readModels = READ_MODELS): string[] {
  const found = strays(namers(files, [...new Set(migrationTables())]), ownerFolder, readModels);
  return [...found].flatMap(([table, list]) =>
    list.map((f) => `${table}: named by ${f}; call its owner ${OWNERS[table]} (a read belongs in ${ownerFolder(table)}/)`),
  );
}

describe('one owner per table', () => {
  it('every table the migrations create is written only by its owner', () => {
    expect(ownershipProblems(writers(readSources(), migrationTables()))).toEqual([]);
  });

  it('a write from anywhere else is reported, naming the file and the owner', () => {
    const sources = { ...readSources(), 'src/api/v1/rogue.ts': "await db.query(`update installations set status = 'installed' where id = $1`, [id]);" };
    expect(ownershipProblems(writers(sources, migrationTables()))).toEqual([
      'installations: written by src/api/v1/rogue.ts, but its owner is src/installations/installations.ts',
    ]);
  });

  it("every table is named (read or written) only in its owner's folder or by a listed read model", () => {
    expect(readProblems(readSources())).toEqual([]);
  });

  it('a read from anywhere else is reported, naming the owner to call; a read model may name only its listed tables', () => {
    const rogue = { 'src/api/v1/rogue.ts': 'const { rows } = await db.query(`select id from teammates t join emails e on e.teammate_id = t.id`);' };
    expect(readProblems(rogue)).toEqual([
      'teammates: named by src/api/v1/rogue.ts; call its owner src/teammates/teammates.ts (a read belongs in src/teammates/)',
      'emails: named by src/api/v1/rogue.ts; call its owner src/teammates/teammates.ts (a read belongs in src/teammates/)',
    ]);
    expect(readProblems(rogue, { 'src/api/v1/rogue.ts': ['teammates'] })).toEqual([
      'emails: named by src/api/v1/rogue.ts; call its owner src/teammates/teammates.ts (a read belongs in src/teammates/)',
    ]);
    // Prose in a comment is not SQL.
    expect(readProblems({ 'src/api/v1/prose.ts': '// reads from teammates through the owner\n/* joins emails */ export const x = 1;' })).toEqual([]);
  });

  it('every event is written only by its owner', () => {
    expect(eventProblems(readSources())).toEqual([]);
  });

  it('an event written from anywhere else is reported', () => {
    const rogue = { 'src/sync/engine.ts': "await emitTeammateEvents(client, ws, 'teammate.deleted', removed);" };
    expect(eventProblems(rogue)).toEqual(['teammate.deleted: written by src/sync/engine.ts, but its owner is src/teammates/teammates.ts']);
  });

  it('a new table without an owner is reported', () => {
    const found = new Map([['brand_new', new Set(['src/db/brandNew.ts'])]]);
    expect(ownershipProblems(found)).toEqual(['brand_new: no owner; add it to OWNERS in test/architecture/ownership.test.ts and to docs/architecture.md']);
  });
});
