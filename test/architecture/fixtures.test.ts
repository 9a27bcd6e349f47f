/**
 * Tests may insert fixtures directly, but through one fixture module per aggregate
 * (test/helpers/fixtures/), not through copies of the same INSERT in every file. A test file outside
 * test/helpers/ that inserts into an aggregate's table fails this test, naming the module to call.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrationTables, sourceFiles } from './scan.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Aggregate table -> the module that inserts it (a fixture module, or the owner where it does just that). */
export const FIXTURE_HOMES: Record<string, string> = {
  workspaces: 'src/db/workspaces.ts',
  teammates: 'test/helpers/fixtures/teammates.ts',
  emails: 'test/helpers/fixtures/teammates.ts',
  teammate_sources: 'test/helpers/fixtures/teammates.ts',
  groups: 'test/helpers/fixtures/teammates.ts',
  smart_fields: 'test/helpers/fixtures/smartFields.ts',
  signatures: 'test/helpers/fixtures/signatures.ts',
  signature_variants: 'test/helpers/fixtures/signatures.ts',
  assignments: 'test/helpers/fixtures/signatures.ts',
  integrations: 'test/helpers/fixtures/integrations.ts',
  marketing_campaigns: 'test/helpers/fixtures/campaigns.ts',
  installations: 'test/helpers/fixtures/installations.ts',
  webhook_endpoints: 'test/helpers/fixtures/webhooks.ts',
};

/** Files that may insert into aggregate tables themselves, each with its reason. */
export const ALLOWED: Record<string, string> = {
  'test/foundation/migrate.test.ts': 'tests the migrations themselves: the constraints and triggers raw inserts must meet',
  'test/foundation/fieldValuesMigration.test.ts': 'tests the carry-over of migration 000030: plants the rows of the table it drops, as they were',
  'test/foundation/embeddedRole.test.ts': "tests the embedded database role's privileges with plain SQL written as that role",
};

const INSERT = /\binsert\s+into\s+(?:only\s+)?(?:public\.)?(\w+)/gi;

/** Where a test file outside test/helpers/ and ALLOWED inserts into an aggregate table. */
export function rawFixtureInserts(files: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (file.startsWith('test/helpers/') || file in ALLOWED) continue;
    for (const m of text.matchAll(INSERT)) {
      const home = FIXTURE_HOMES[m[1]!.toLowerCase()];
      if (!home) continue;
      const line = text.slice(0, m.index).split('\n').length;
      problems.push(`${file}:${line}: inserts into ${m[1]}; call ${home}`);
    }
  }
  return problems;
}

function testSources(): Record<string, string> {
  return Object.fromEntries(
    sourceFiles(['test'])
      .filter((f) => f !== 'test/architecture/fixtures.test.ts')
      .map((f) => [f, fs.readFileSync(path.join(ROOT, f), 'utf8')]),
  );
}

describe('one fixture module per aggregate', () => {
  it('no test file outside test/helpers/ inserts into an aggregate table', () => {
    expect(rawFixtureInserts(testSources())).toEqual([]);
  });

  it('a raw insert in a test file is reported with its line and the module to call; helpers and allowed files are not', () => {
    const files = {
      'test/api/rogue.test.ts':
        "const a = 1;\nawait pool.query(`INSERT INTO public.signatures (workspace_id, name) values ($1, 'S')`);\nawait pool.query('insert into events (type) values (1)');",
      'test/helpers/fixtures/signatures.ts': "await db.query('insert into signatures (workspace_id) values ($1)');",
      'test/foundation/migrate.test.ts': "await c.query('insert into teammates (workspace_id) values ($1)');",
    };
    expect(rawFixtureInserts(files)).toEqual(['test/api/rogue.test.ts:2: inserts into signatures; call test/helpers/fixtures/signatures.ts']);
  });

  it('every aggregate table named is one the migrations create, and every file named exists', () => {
    const tables = new Set(migrationTables());
    expect(Object.keys(FIXTURE_HOMES).filter((t) => !tables.has(t))).toEqual([]);
    expect(Object.keys(ALLOWED).filter((f) => !fs.existsSync(path.join(ROOT, f)))).toEqual([]);
    expect(Object.values(FIXTURE_HOMES).filter((f) => !fs.existsSync(path.join(ROOT, f)))).toEqual([]);
  });
});
