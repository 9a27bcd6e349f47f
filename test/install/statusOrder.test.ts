/**
 * `sigsync install status` lists an address's installations in one order: the signature's name as
 * the database sorts it, then the kind, then the provider. The command reads them through the
 * owners (installations, signatures, integrations) and orders them itself; this pins that order
 * against the one query that used to answer it, whatever the database's collation.
 */
import { describe, expect, it } from 'vitest';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { insertInstallation } from '../helpers/fixtures/installations.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

describe('sigsync install status: the order of the rows', () => {
  const t = useTestContext();

  it('orders by signature name (the database collation), kind, then provider', async () => {
    const ws = (await createWorkspace(t.ctx.pool, 'Acme')).id;
    const tm = await insertTeammate(t.ctx.pool, ws, { displayName: 'Ola', emails: [{ address: 'ola@acme.test', primary: true }] });
    const slack = await insertIntegrationRow(t.ctx.pool, ws, {
      kind: 'slack',
      category: 'signatures',
      name: 'A Slack',
      credentials: t.ctx.secrets.encryptJson({}),
    });
    const gmail = await insertIntegrationRow(t.ctx.pool, ws, {
      kind: 'google_workspace',
      category: 'signatures',
      name: 'Z Gmail',
      credentials: t.ctx.secrets.encryptJson({}),
    });
    // Created in an order that is none of the sorted ones; two signatures share a name.
    const names = ['beta', 'Alpha', 'alpha', 'Beta', 'beta'];
    const draft = { type: 'root', children: [] };
    for (const name of names) {
      const signatureId = await insertSignature(t.ctx.pool, ws, { name, draftContent: draft });
      for (const [kind, integrationId] of [
        ['reply', slack],
        ['primary', gmail],
        ['primary', slack],
        ['internal', gmail],
      ] as const) {
        await insertInstallation(t.ctx.pool, ws, { emailId: tm.emailIds[0]!, signatureId, integrationId, kind, status: 'installed' });
      }
    }
    const { rows: expected } = await t.ctx.pool.query<{ signature: string; kind: string; provider: string }>(
      `select s.name as signature, i.kind, ig.kind as provider
         from installations i join signatures s on s.id = i.signature_id join integrations ig on ig.id = i.integration_id
        where i.workspace_id = $1 and i.email_id = $2 order by s.name, i.kind, ig.kind`,
      [ws, tm.emailIds[0]],
    );

    const r = await runCli(['install', 'status', '--email', 'ola@acme.test'], { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY });
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .slice(2)
      .map((l) =>
        l
          .split(/\s{2,}/)
          .slice(0, 3)
          .join(' '),
      );
    expect(rows).toHaveLength(names.length * 4);
    expect(rows).toEqual(expected.map((e) => `${e.signature} ${e.kind} ${e.provider}`));
  });
});
