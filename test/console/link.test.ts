/** `sigsync console link`: a one-time sign-in link for one workspace, printed on stdout. */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { findSession, redeemSignInLink } from '../../src/console/sessions.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';

describe('sigsync console link', () => {
  const t = useTestContext();

  it('prints a link that opens one session of that workspace; only its hash is stored', async () => {
    const ws = await createWorkspace(t.ctx.pool, 'Acme');
    const env = { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY, PUBLIC_BASE_URL: 'https://sig.example.test' };
    const r = await runCli(['console', 'link', '--workspace', ws.id], env);
    expect(r.code, r.stderr).toBe(0);
    const token = /^https:\/\/sig\.example\.test\/console\/sign-in\?token=(sgl_[A-Za-z0-9]{43})$/m.exec(r.stdout)?.[1];
    expect(token, r.stdout).toBeDefined();
    const stored = await t.ctx.pool.query<{ token_hash: Buffer; workspace_id: string; created_by: string }>(
      'select token_hash, workspace_id, created_by from console_sign_in_links',
    );
    expect(stored.rows).toHaveLength(1);
    expect(stored.rows[0]!.token_hash.equals(crypto.createHash('sha256').update(token!).digest())).toBe(true);
    expect(stored.rows[0]!.created_by).toMatch(/^cli:/);

    const session = await redeemSignInLink(t.ctx.pool, token!);
    expect(session?.workspaceId).toBe(ws.id);
    expect((await findSession(t.ctx.pool, session!.token))?.workspaceId).toBe(ws.id);
    expect(await redeemSignInLink(t.ctx.pool, token!)).toBeUndefined();
  });

  it('refuses an unknown workspace and a malformed id (exit 2)', async () => {
    const env = { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY };
    const unknown = await runCli(['console', 'link', '--workspace', crypto.randomUUID()], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--workspace: no workspace/);
    const malformed = await runCli(['console', 'link', '--workspace', 'acme'], env);
    expect(malformed.code).toBe(2);
  });
});
