/**
 * The production build holds no test double: the files `npm run build` compiles
 * (tsconfig.build.json, listed by `tsc --listFilesOnly`) include nothing of emulators/, and no
 * identifier of them is an emulator's fault knob (emulators/http.ts `Knobs`). The sandbox still
 * finds its emulated tenants at run time (src/sandbox/tenants.ts), and what it loads answers the
 * interface it expects (checked by the typecheck here).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as acme from '../../emulators/acme.ts';
import { defaultKnobs } from '../../emulators/http.ts';
import { EMULATORS_ENTRY, type EmulatorsModule } from '../../src/sandbox/tenants.ts';
import { DEADLINE_MS } from '../helpers/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

/** emulators/acme.ts is what the sandbox loads: it must answer the sandbox's interface. */
const loaded: EmulatorsModule = acme;

/** Every knob of the emulators but `quotaPerSecond`, which is also the install pace's own option (src/install/pace.ts). */
const KNOBS = new Set(Object.keys(defaultKnobs()).filter((k) => k !== 'quotaPerSecond'));

/** The project's files (relative to the root) that the production build compiles. */
async function buildFiles(): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [TSC, '-p', 'tsconfig.build.json', '--listFilesOnly'], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((f) => path.relative(ROOT, f))
    .filter((f) => !f.startsWith('..') && !f.split(path.sep).includes('node_modules'));
}

/** The identifiers of a source file (its syntax tree's: comments, strings and templates left out). */
function identifiers(file: string): Set<string> {
  const source = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) found.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the production build', () => {
  it('compiles src/ and connectors/ without any emulator file or fault knob', { timeout: DEADLINE_MS }, async () => {
    const files = await buildFiles();
    expect(files).toContain(path.join('src', 'sandbox', 'tenants.ts'));
    expect(files.filter((f) => f.startsWith(`emulators${path.sep}`))).toEqual([]);
    const knobs = files.filter((f) => f.endsWith('.ts')).flatMap((f) => [...identifiers(f)].filter((id) => KNOBS.has(id)).map((id) => `${f}: ${id}`));
    expect(knobs).toEqual([]);
  });

  it('the knob check finds the knobs where they are', () => {
    expect([...identifiers(path.join('emulators', 'http.ts'))].filter((id) => KNOBS.has(id)).sort()).toEqual([...KNOBS].sort());
    expect(KNOBS).toContain('revokeAtRequest');
    expect(KNOBS).toContain('hold');
  });

  it('the sandbox loads its emulated tenants from emulators/acme.ts in the source tree', () => {
    expect(path.relative(ROOT, fileURLToPath(EMULATORS_ENTRY))).toBe(path.join('emulators', 'acme.ts'));
    expect(typeof loaded.startAcmeEmulators).toBe('function');
  });
});
