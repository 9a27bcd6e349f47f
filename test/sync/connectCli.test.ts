/**
 * `sigsync integration connect` as a newcomer runs it: the one-file `{"credentials", "config"}`
 * shape the provider docs show, a provider that cannot be reached, and credentials that no cheap
 * call can check.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext, TEST_KEY } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { googleServiceAccount, workspaceWithKey } from '../helpers/fixtures.ts';

describe('integration connect', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let dir: string;
  let workspaceId: string;
  const env = () => ({ DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  const file = (name: string, value: unknown) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify(value));
    return p;
  };
  const connect = (category: string, creds: string, ...extra: string[]) =>
    runCli(['integration', 'connect', '--workspace', workspaceId, '--kind', 'google_workspace', '--category', category, '--credentials-file', creds, ...extra], env());
  const stored = async () => (await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from integrations where workspace_id = $1', [workspaceId])).rows[0]!.n;

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(3));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-connect-'));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
  });
  afterAll(async () => {
    await google.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('accepts {"credentials": {...}, "config": {...}} in --credentials-file, and refuses a second config from --config', async () => {
    const config = { base_url: `${google.url}/`, token_url: `${google.url}/token` };
    const both = file('both.json', { credentials: googleServiceAccount(), config });
    const r = await connect('teammates', both, '--name', 'One file');
    expect(r.code, r.stderr).toBe(0);
    const id = /integration (\S+) connected/.exec(r.stdout)![1]!;
    const row = await t.ctx.pool.query<{ config: Record<string, unknown> }>('select config from integrations where id = $1', [id]);
    expect(row.rows[0]!.config).toMatchObject(config);
    const twice = await connect('teammates', both, '--config', file('config.json', config));
    expect(twice.code).toBe(2);
    expect(twice.stderr).toBe('--credentials-file: holds a "config" and --config gives another; put the config in one place\n');
  });

  it('a provider that cannot be reached is said to be unreachable, not to have refused the credentials', async () => {
    const before = await stored();
    // Port 1 on loopback: nothing listens, the connection is refused.
    const r = await connect('teammates', file('key.json', googleServiceAccount()), '--config', file('down.json', { base_url: 'http://127.0.0.1:1/', token_url: 'http://127.0.0.1:1/token' }));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^could not reach the provider to check these credentials \(ECONNREFUSED\); nothing was stored\. /);
    expect(r.stderr).not.toMatch(/refused these credentials/);
    expect(await stored()).toBe(before);
  });

  it('a signatures connect says its credentials were not checked', async () => {
    const r = await connect('signatures', file('made-up.json', { ...googleServiceAccount(), client_email: 'made-up@nowhere.iam.gserviceaccount.com' }), '--config', file('gmail.json', { base_url: `${google.url}/`, token_url: `${google.url}/token` }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/connected \(google_workspace, signatures\)/);
    expect(r.stdout).toMatch(/^credentials not checked: /m);
  });
});
