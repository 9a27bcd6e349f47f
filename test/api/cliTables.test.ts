/**
 * The CLI's tables (src/output.ts `table`) print each cell on one line: a line feed in a directory
 * value cannot forge a row under the heading, and a bidi control (U+202E) cannot reorder the line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { oneLine, terminalSafe } from '../../src/output.ts';
import { runCli } from '../helpers/cli.ts';
import { tree } from './helpers.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { insertInstallation } from '../helpers/fixtures/installations.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const FORGED = 'Standard  primary  google_workspace  installed';
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('CLI tables: control and bidi characters', () => {
  const t = useTestContext();

  it('install status prints a name with a line feed and U+202E escaped, on its own row', async () => {
    const ws = (await createWorkspace(t.ctx.pool, 'Acme')).id;
    const tm = await insertTeammate(t.ctx.pool, ws, {
      displayName: `Mallory\n${FORGED}\u202Egnp.exe`,
      emails: [{ address: 'mallory@acme.test', primary: true }],
    });
    const integrationId = await insertIntegrationRow(t.ctx.pool, ws, { category: 'signatures', name: 'Gmail', credentials: t.ctx.secrets.encryptJson({}) });
    const signatureId = await insertSignature(t.ctx.pool, ws, { name: `Sales\n${FORGED}`, draftContent: { type: 'root', children: [] } });
    const installationId = await insertInstallation(t.ctx.pool, ws, { emailId: tm.emailIds[0]!, signatureId, integrationId, status: 'failed' });
    await t.ctx.pool.query(`update installations set error_code = 'forbidden', error_message = $2 where id = $1`, [
      installationId,
      `denied\r\n${FORGED}\u2028\u202Edetacilpmoc`,
    ]);

    const r = await runCli(['install', 'status', '--email', 'mallory@acme.test'], { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY });
    expect(r.code, r.stderr).toBe(0);
    console.log(`sigsync install status --email mallory@acme.test, a name with LF and U+202E:\n${r.stdout}`);
    const lines = r.stdout.trimEnd().split('\n');
    // The address line, the heading, one row: nothing else.
    expect(lines, r.stdout).toHaveLength(3);
    expect(lines[0]).toBe('mallory@acme.test (Mallory\\x0aStandard  primary  google_workspace  installed\\u{202e}gnp.exe)');
    expect(lines[1]).toMatch(/^SIGNATURE\s+KIND\s+PROVIDER\s+STATUS\s+ERROR\s+.*MESSAGE$/);
    expect(lines[2]).toMatch(/^Sales\\x0aStandard {2}primary {2}google_workspace {2}installed\s+primary\s+google_workspace\s+failed\s+forbidden\s/);
    expect(lines[2]).toContain('denied\\x0d\\x0aStandard  primary  google_workspace  installed\\u{2028}\\u{202e}detacilpmoc');
    expect(r.stdout).not.toMatch(BIDI);
    expect(r.stdout).not.toMatch(/^Standard/m);
  });

  it("render's facts (teammate, signature, banner) are a table too: a name with a line feed and U+202E stays on its row", async () => {
    const ws = (await createWorkspace(t.ctx.pool, 'Acme')).id;
    await insertTeammate(t.ctx.pool, ws, { displayName: `Eve\nbanner    none\u202Egnp.exe`, emails: [{ address: 'eve@acme.test', primary: true }] });
    const signatureId = await insertSignature(t.ctx.pool, ws, { name: `Main\nteammate  Someone Else`, content: tree('Hi'), draftContent: tree('Hi') });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-facts-'));
    try {
      const env = { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY };
      const check = await runCli(['render', '--signature', signatureId, '--email', 'eve@acme.test', '--check'], env);
      const out = await runCli(['render', '--signature', signatureId, '--email', 'eve@acme.test', '--out', path.join(dir, 'eve.html')], env);
      for (const r of [check, out]) {
        expect(r.code, r.stderr).toBe(0);
        const lines = r.stdout.split('\n');
        expect(lines.filter((l) => l.startsWith('teammate '))).toEqual([
          expect.stringMatching(/^teammate {2}Eve\\x0abanner {4}none\\u\{202e\}gnp\.exe <eve@acme\.test> \(/),
        ]);
        expect(lines.filter((l) => l.startsWith('signature '))).toEqual([expect.stringMatching(/^signature Main\\x0ateammate {2}Someone Else \(/)]);
        expect(lines.filter((l) => l.startsWith('banner '))).toEqual(['banner    none']);
        expect(r.stdout).not.toMatch(BIDI);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('escapes every C0, C1 and bidi control in a cell, and the bidi controls in any line', () => {
    const all = [
      ...Array.from({ length: 0x20 }, (_, i) => i),
      ...Array.from({ length: 0x21 }, (_, i) => 0x7f + i),
      0x61c,
      0x200e,
      0x200f,
      0x2028,
      0x2029,
      0x202a,
      0x202b,
      0x202c,
      0x202d,
      0x202e,
      0x2066,
      0x2067,
      0x2068,
      0x2069,
    ];
    const cell = oneLine(String.fromCharCode(...all));
    expect(cell).toMatch(/^[\x20-\x7e]+$/);
    expect(cell.match(/\\(x[0-9a-f]{2}|u\{[0-9a-f]{4}\})/g)).toHaveLength(all.length);
    expect(terminalSafe('a\u202Eb\nc\td')).toBe('a\\u{202e}b\nc\td');
  });
});
