/**
 * The production path (docs/production.md): with DATABASE_URL every process needs the same
 * ENCRYPTION_KEY, the database knows its fingerprint, the public base URL is the deployment's (the
 * CLI renders with the one the API server recorded), PUBLIC_BASE_URL and DATA_DIR are checked, and a
 * lone worker serves its own metrics.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, TEST_KEY, testConfig } from '../helpers/db.ts';
import { BIN, childEnv, runCli, runProcess } from '../helpers/cli.ts';
import { createLogger } from '../../src/log.ts';
import { createPool } from '../../src/db/pool.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { startApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { checkKeyFingerprint } from '../../src/db/deployment.ts';
import { anyStoredCredential } from '../../src/integrations/queries.ts';
import { Secrets } from '../../src/crypto/secrets.ts';
import { ConfigError } from '../../src/configError.ts';
import { configError } from '../helpers/config.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';

const OTHER_KEY = crypto.createHash('sha256').update('another key').digest('hex');

describe('production settings', async () => {
  const db = await createDatabase();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-prod-'));
  afterAll(async () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    await db.drop();
  });

  it('with DATABASE_URL and no ENCRYPTION_KEY a command stops with one line, exit 2, and writes nothing', async () => {
    const cwd = fs.mkdtempSync(path.join(tmp, 'cwd-'));
    const dataDir = path.join(tmp, 'never-made');
    for (const args of [['runs'], ['api'], ['worker']]) {
      const r = await runProcess(process.execPath, [BIN, ...args], { cwd, env: childEnv({ DATABASE_URL: db.url, DATA_DIR: dataDir, PORT: '3533' }) });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^ENCRYPTION_KEY: required with DATABASE_URL .*\n$/);
      expect(r.stderr.split('\n')).toHaveLength(2);
    }
    expect(fs.existsSync(dataDir)).toBe(false);
    expect(fs.readdirSync(cwd)).toEqual([]);
  });

  it('the database keeps the key fingerprint: a process with another key refuses to start', async () => {
    const first = await runCli(['runs'], { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY });
    expect(first.code, first.stderr).toBe(0);
    const wrong = await runCli(['runs'], { DATABASE_URL: db.url, ENCRYPTION_KEY: OTHER_KEY });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^ENCRYPTION_KEY: not the key this database was set up with .*\n$/);
    const again = await runCli(['runs'], { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY });
    expect(again.code, again.stderr).toBe(0);
  });

  it('a database from before the fingerprint is checked against the credentials it holds', async () => {
    const other = await createDatabase();
    const pool = createPool(other.url, 2);
    try {
      const mine = new Secrets(Buffer.from(TEST_KEY, 'hex'));
      const old = await createWorkspace(pool, 'Old');
      await insertIntegrationRow(pool, old.id, { kind: 'slack', category: 'teammates', name: 'Slack', credentials: mine.encryptJson({ token: 'x' }) });
      const logger = createLogger('silent');
      await expect(checkKeyFingerprint(pool, new Secrets(Buffer.from(OTHER_KEY, 'hex')), logger, anyStoredCredential)).rejects.toThrow(ConfigError);
      const stored = await pool.query<{ key_fingerprint: string | null }>('select key_fingerprint from deployment');
      expect(stored.rows[0]!.key_fingerprint).toBeNull();
      await checkKeyFingerprint(pool, mine, logger, anyStoredCredential);
      expect((await pool.query<{ key_fingerprint: string }>('select key_fingerprint from deployment')).rows[0]!.key_fingerprint).toBe(mine.fingerprint());
    } finally {
      await pool.end();
      await other.drop();
    }
  });

  it('PUBLIC_BASE_URL: https, or http on a loopback host; nothing else', () => {
    expect(configError({ PUBLIC_BASE_URL: 'ftp://x' }).message).toMatch(/^PUBLIC_BASE_URL: invalid value; expected an https URL .*ftp: cannot be linked/);
    expect(configError({ PUBLIC_BASE_URL: 'http://sig.example.com' }).message).toMatch(/http is allowed only on a loopback host/);
    expect(configError({ PUBLIC_BASE_URL: 'https://u:p@sig.example.com' }).message).toMatch(/without credentials/);
    expect(configError({ PUBLIC_BASE_URL: 'https://sig.example.com/?a=1' }).message).toMatch(/without credentials, query/);
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://sig.example.com/' }).PUBLIC_BASE_URL).toBe('https://sig.example.com');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:3411' }).PUBLIC_BASE_URL).toBe('http://127.0.0.1:3411');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://localhost:3411' }).PUBLIC_BASE_URL).toBe('http://localhost:3411');
    expect(loadConfig({ PUBLIC_BASE_URL: 'http://[::1]:3411' }).PUBLIC_BASE_URL).toBe('http://[::1]:3411');
  });

  it('DATA_DIR that cannot be made or written: one line and exit 2, promptly', async () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, '');
    for (const [dir, why] of [
      ['/proc/nope', /making \/proc\/nope failed/],
      [path.join(file, 'data'), /is not a directory/],
    ] as const) {
      const started = Date.now();
      const r = await runCli(['runs'], { DATA_DIR: dir }, 60_000);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^DATA_DIR: cannot use ${dir.replace(/[/.]/g, '\\$&')}: .*; choose another DATA_DIR\\n$`));
      expect(r.stderr).toMatch(why);
      expect(Date.now() - started).toBeLessThan(30_000);
    }
  });

  it('ALLOW_INSECURE_WEBHOOKS is a deprecated alias of ALLOW_INSECURE_OUTBOUND_URLS', () => {
    const old = loadConfig({ ALLOW_INSECURE_WEBHOOKS: '1' });
    expect(old.ALLOW_INSECURE_OUTBOUND_URLS).toBe(true);
    expect(old.deprecations).toEqual(['ALLOW_INSECURE_WEBHOOKS is deprecated: it is now ALLOW_INSECURE_OUTBOUND_URLS (same values)']);
    const both = loadConfig({ ALLOW_INSECURE_WEBHOOKS: '1', ALLOW_INSECURE_OUTBOUND_URLS: '0' });
    expect(both.ALLOW_INSECURE_OUTBOUND_URLS).toBe(false);
    expect(both.deprecations?.[0]).toMatch(/ignored/);
    expect(configError({ ALLOW_INSECURE_WEBHOOKS: 'yes' }).message).toMatch(/^ALLOW_INSECURE_WEBHOOKS: invalid value/);
    expect(loadConfig({}).deprecations).toBeUndefined();
  });

  it('a lone worker serves its own /metrics on WORKER_METRICS_PORT, with the job figures it ran', async () => {
    const logger = createLogger('silent');
    const app = await startApp(testConfig({ DATABASE_URL: db.url, WORKER_METRICS_PORT: '0' }), logger, { worker: true });
    try {
      expect(app.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      app.ctx.metrics.jobs.inc({ task: 'sync_directory', outcome: 'succeeded' });
      const r = await fetch(app.metricsUrl!);
      expect(r.status).toBe(200);
      expect(await r.text()).toMatch(/sigsync_jobs_total\{task="sync_directory",outcome="succeeded"\} 1/);
      expect((await fetch(app.metricsUrl!.replace('/metrics', '/'))).status).toBe(404);
    } finally {
      await app.stop();
    }
  });

  it('the API server records the public base URL; the CLI uses it, and refuses a PUBLIC_BASE_URL that disagrees', async () => {
    const logger = createLogger('silent');
    const app = await startApp(testConfig({ DATABASE_URL: db.url, PUBLIC_BASE_URL: 'https://sig.example.com' }), logger, { api: true });
    await app.stop();
    const pool = createPool(db.url, 1);
    try {
      expect((await pool.query<{ public_base_url: string }>('select public_base_url from deployment')).rows[0]!.public_base_url).toBe(
        'https://sig.example.com',
      );
    } finally {
      await pool.end();
    }
    const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY };
    const workspace = await runCli(['workspace', 'create', '--name', 'Links'], env);
    expect(workspace.code, workspace.stderr).toBe(0);
    const differs = await runCli(['runs'], { ...env, PUBLIC_BASE_URL: 'https://other.example.com' });
    expect(differs.code).toBe(2);
    expect(differs.stderr).toBe(
      'PUBLIC_BASE_URL: https://other.example.com differs from https://sig.example.com, the public URL the API server recorded for this deployment; unset it here, or restart the API with the new value\n',
    );
    expect((await runCli(['runs'], { ...env, PUBLIC_BASE_URL: 'https://sig.example.com' })).code).toBe(0);
  });
});
