import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, TEST_KEY } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { createPool } from '../../src/db/pool.ts';
import { Secrets } from '../../src/crypto/secrets.ts';
import { EVENT_TYPES } from '../../src/events/outbox.ts';

describe('sigsync webhook', async () => {
  const db = await createDatabase();
  const pool = createPool(db.url, 2);
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });
  const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_WEBHOOKS: '1' };
  const strictEnv = { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_WEBHOOKS: '0' };
  const ws = (await pool.query<{ id: string }>(`insert into workspaces (name) values ('Hooks Inc') returning id`)).rows[0]!.id;

  it('add prints the endpoint id and a whsec_ secret once, stored encrypted; list shows it without the secret; remove deletes it', async () => {
    const add = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://127.0.0.1:9/hooks', '--events', 'teammate.created,campaign.started'], env);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    const id = /webhook endpoint\s+([0-9a-f-]{36})/.exec(add.stdout)?.[1];
    const secret = /signing secret\s+(whsec_\S+)/.exec(add.stdout)?.[1];
    expect(id).toBeDefined();
    expect(secret).toBeDefined();
    expect(Buffer.from(secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);

    const row = (await pool.query('select url, event_types, secret from webhook_endpoints where id = $1', [id])).rows[0];
    expect(row.url).toBe('http://127.0.0.1:9/hooks');
    expect(row.event_types).toEqual(['teammate.created', 'campaign.started']);
    expect(row.secret.toString('latin1')).not.toContain(secret!.slice(6));
    expect(new Secrets(Buffer.from(TEST_KEY, 'hex')).decrypt(row.secret)).toBe(secret);

    const all = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://localhost:9/all'], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/events\s+all/);

    const list = await runCli(['webhook', 'list', '--workspace', ws], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+URL\s+EVENTS\s+ENABLED\s+FAILURES/);
    expect(list.stdout).toContain(id!);
    expect(list.stdout).toContain('teammate.created,campaign.started');
    expect(list.stdout).toMatch(/http:\/\/localhost:9\/all\s+all\s+yes\s+0/);
    expect(list.stdout).not.toContain('whsec_');

    const rm = await runCli(['webhook', 'remove', id!], env);
    expect(rm.code).toBe(0);
    expect(rm.stdout).toContain(`removed webhook endpoint ${id}`);
    expect((await pool.query('select 1 from webhook_endpoints where id = $1', [id])).rowCount).toBe(0);
    const again = await runCli(['webhook', 'remove', id!], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/no webhook endpoint/);
  });

  it('add refuses unknown event types with exit 2, listing the allowed ones', async () => {
    const r = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://127.0.0.1:9/', '--events', 'teammate.created,teammate.renamed'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('teammate.renamed');
    for (const type of EVENT_TYPES) expect(r.stderr).toContain(type);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.each([
    ['http://hooks.example.com/in', 'on', /only for a loopback host/],
    ['http://127.0.0.1:9/in', 'off', /must use https/],
    ['https://127.0.0.1:9/in', 'off', /loopback/],
    ['https://localhost/in', 'off', /loopback/],
    ['https://10.1.2.3/in', 'on', /private, link-local or reserved/],
    ['https://169.254.169.254/latest', 'on', /private, link-local or reserved/],
    ['https://[fd00::5]/in', 'on', /private, link-local or reserved/],
    ['ftp://files.example.com/', 'on', /must use https/],
  ])('add refuses %s (ALLOW_INSECURE_WEBHOOKS %s) with exit 2 and stores nothing', async (url, insecure, message) => {
    const before = (await pool.query('select count(*)::int as n from webhook_endpoints')).rows[0].n;
    const r = await runCli(['webhook', 'add', '--workspace', ws, '--url', url], insecure === 'on' ? env : strictEnv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^--url: refused: /);
    expect(r.stderr).toMatch(message);
    expect((await pool.query('select count(*)::int as n from webhook_endpoints')).rows[0].n).toBe(before);
  });

  it('refuses a malformed or unknown workspace with exit 2', async () => {
    const bad = await runCli(['webhook', 'list', '--workspace', 'acme'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--workspace: expected an id/);
    const unknown = await runCli(['webhook', 'add', '--workspace', '00000000-0000-4000-8000-000000000000', '--url', 'http://127.0.0.1:9/'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--workspace: no workspace/);
  });

  it('enable turns a disabled endpoint back on with a clean failure count', async () => {
    const add = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://127.0.0.1:9/back'], env);
    const id = /webhook endpoint\s+(\S+)/.exec(add.stdout)![1]!;
    await pool.query(`update webhook_endpoints set enabled = false, consecutive_failures = 20, disabled_reason = '20 deliveries in a row failed' where id = $1`, [id]);
    const listed = await runCli(['webhook', 'list', '--workspace', ws], env);
    expect(listed.stdout).toMatch(new RegExp(`${id}.*no\\s+20\\s+20 deliveries in a row failed`));
    const r = await runCli(['webhook', 'enable', id], env);
    expect(r.code).toBe(0);
    const row = (await pool.query('select enabled, consecutive_failures, disabled_reason from webhook_endpoints where id = $1', [id])).rows[0];
    expect(row).toEqual({ enabled: true, consecutive_failures: 0, disabled_reason: null });
  });
});
