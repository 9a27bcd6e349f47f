import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { verifyApiKey } from '../../src/db/apiKeys.ts';
import { createPool } from '../../src/db/pool.ts';

describe('sigsync CLI', async () => {
  const db = await createDatabase();
  afterAll(() => db.drop());
  const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: 'a'.repeat(64) };

  it('prints usage and exits 2 on an unknown command', async () => {
    const r = await runCli(['frobnicate'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'frobnicate'/);
    expect(r.stderr).toMatch(/sigsync --help/);
  });

  it('prints usage and exits 2 on an unknown flag', async () => {
    const r = await runCli(['migrate', '--bogus'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--bogus'/);
  });

  it('shows --help for every command and exits 0', async () => {
    const top = await runCli(['--help']);
    expect(top.code).toBe(0);
    for (const cmd of ['serve', 'worker', 'api', 'migrate', 'workspace', 'apikey']) expect(top.stdout).toContain(cmd);
    const sub = await runCli(['workspace', 'create', '--help']);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain('--name');
  });

  it('workspace create prints a key once, and that key authenticates', async () => {
    const r = await runCli(['workspace', 'create', '--name', 'Globex'], env);
    expect(r.code).toBe(0);
    const key = /api key\s+(sgs_\S+)/.exec(r.stdout)?.[1];
    expect(key).toBeDefined();
    const pool = createPool(db.url, 1);
    try {
      const found = await verifyApiKey(pool, key!);
      const ws = await pool.query('select name from workspaces where id = $1', [found?.workspaceId]);
      expect(ws.rows[0].name).toBe('Globex');
    } finally {
      await pool.end();
    }
  });

  it('apikey create refuses a workspace that does not exist, with exit 2', async () => {
    const r = await runCli(['apikey', 'create', '--workspace', '00000000-0000-4000-8000-000000000000'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workspace: no workspace/);
  });

  it('apikey create refuses a malformed id, with exit 2', async () => {
    const r = await runCli(['apikey', 'create', '--workspace', 'acme'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workspace: expected an id/);
  });
});
