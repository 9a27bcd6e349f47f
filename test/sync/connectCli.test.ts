/**
 * `sigsync integration connect` as a newcomer runs it: the one-file `{"credentials", "config"}`
 * shape the provider docs show, a provider that cannot be reached, a Gmail key checked without
 * writing to a mailbox (a made-up one refused), and credentials that no cheap call can check.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext, TEST_KEY } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { googleServiceAccount, testPrivateKey, workspaceWithKey } from '../helpers/fixtures.ts';

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
    runCli(
      ['integration', 'connect', '--workspace', workspaceId, '--kind', 'google_workspace', '--category', category, '--credentials-file', creds, ...extra],
      env(),
    );
  const stored = async () =>
    (await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from integrations where workspace_id = $1', [workspaceId])).rows[0]!.n;

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(3));
    // The emulated Google checks the test service account's signed assertions, as Google does.
    const publicKey = crypto.createPublicKey(testPrivateKey()).export({ type: 'spki', format: 'pem' }).toString();
    google.tenant.serviceAccounts = new Map([[googleServiceAccount().client_email, publicKey]]);
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
    const r = await connect(
      'teammates',
      file('key.json', googleServiceAccount()),
      '--config',
      file('down.json', { base_url: 'http://127.0.0.1:1/', token_url: 'http://127.0.0.1:1/token' }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^could not reach the provider to check these credentials \(ECONNREFUSED\); nothing was stored\. /);
    expect(r.stderr).not.toMatch(/refused these credentials/);
    expect(await stored()).toBe(before);
  });

  const gmailConfig = () => file('gmail.json', { base_url: `${google.url}/`, token_url: `${google.url}/token` });
  const madeUp = (subject?: string) => ({ ...googleServiceAccount(subject), client_email: 'made-up@nowhere.iam.gserviceaccount.com' });

  it('a Gmail (signatures) connect reads the send-as addresses of its subject, and refuses a made-up key, storing nothing', async () => {
    const before = await stored();
    const refused = await connect('signatures', file('made-up.json', madeUp('user0@example.test')), '--config', gmailConfig());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'the provider refused these credentials (access_lost): sendAs.list as user0@example.test: invalid_grant: Invalid grant: account not found\n',
    );
    expect(await stored()).toBe(before);

    const noSuchMailbox = await connect('signatures', file('key.json', googleServiceAccount('nobody@example.test')), '--config', gmailConfig());
    expect(noSuchMailbox.code).toBe(2);
    expect(noSuchMailbox.stderr).toMatch(/^the provider refused these credentials \(user_not_found\): sendAs\.list as nobody@example\.test: /);

    const listed = google.counters.byRoute['sendAs.list'] ?? 0;
    const r = await connect('signatures', file('key.json', googleServiceAccount('user0@example.test')), '--config', gmailConfig());
    expect(r.code, r.stderr).toBe(0);
    // Connected, and nothing said to be unchecked.
    expect(r.stdout).toMatch(/^integration \S+ connected \(google_workspace, signatures\), status active\n$/);
    expect(google.counters.byRoute['sendAs.list']).toBe(listed + 1);
    expect(await stored()).toBe(before + 1);
  });

  it('without a subject, a Gmail connect checks the key alone and says the delegation was not checked', async () => {
    const { subject: _, ...withoutSubject } = googleServiceAccount();
    const otherKey = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const forged = await connect('signatures', file('forged.json', { ...withoutSubject, private_key: otherKey }), '--config', gmailConfig());
    expect(forged.code).toBe(2);
    expect(forged.stderr).toBe('the provider refused these credentials (access_lost): token for the service account: invalid_grant: Invalid JWT Signature.\n');

    const r = await connect('signatures', file('no-subject.json', withoutSubject), '--config', gmailConfig());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/connected \(google_workspace, signatures\)/);
    expect(r.stdout).toMatch(
      /^not checked: the delegation of the Gmail scope: with no "subject" in the credentials there is no mailbox to act as, so only the key was checked/m,
    );
  });

  it('a Gmail connect to a host that cannot be reached says so', async () => {
    const r = await connect(
      'signatures',
      file('key.json', googleServiceAccount('user0@example.test')),
      '--config',
      file('down.json', { base_url: 'http://127.0.0.1:1/', token_url: 'http://127.0.0.1:1/token' }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^could not reach the provider to check these credentials \(ECONNREFUSED\); nothing was stored\. /);
  });

  it('an assets (photos) connect, which no cheap call can check, says its credentials were not checked', async () => {
    const r = await connect('assets', file('key.json', googleServiceAccount()), '--config', gmailConfig());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^not checked: the credentials: this integration has no call that proves them without acting on a mailbox; /m);
  });
});
