import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, TEST_KEY } from '../helpers/db.ts';
import { parseSince } from '../../src/cli/commands/webhookDeliveries.ts';
import { runCli } from '../helpers/cli.ts';
import { createPool } from '../../src/db/pool.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { Secrets } from '../../src/crypto/secrets.ts';
import { EVENT_TYPES, emitEvent } from '../../src/db/outbox.ts';
import { dispatchWorkspace } from '../../src/webhooks/deliveries.ts';
import { deliverOnce } from '../../src/webhooks/delivery.ts';
import { createLogger } from '../../src/log.ts';
import { testConfig } from '../helpers/db.ts';
import { startReceiver } from './receiver.ts';
import { teammateBody } from './fixtures.ts';

describe('sigsync webhook', async () => {
  const db = await createDatabase();
  const pool = createPool(db.url, 2);
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });
  const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '1' };
  const strictEnv = { DATABASE_URL: db.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '0' };
  const ws = (await createWorkspace(pool, 'Hooks Inc')).id;
  const auditOf = async (endpointId: string) =>
    (
      await pool.query(`select action, actor_kind, workspace_id from audit_entries where target_kind = 'webhook_endpoint' and target = $1 order by at, id`, [
        endpointId,
      ])
    ).rows;

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
    // Endpoints (and their signing secrets) are keys: each change is in the workspace's audit trail, a refused one not.
    expect(await auditOf(id!)).toEqual([
      { action: 'webhook_endpoint.create', actor_kind: 'cli', workspace_id: ws },
      { action: 'webhook_endpoint.delete', actor_kind: 'cli', workspace_id: ws },
    ]);
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
  ])('add refuses %s (ALLOW_INSECURE_OUTBOUND_URLS %s) with exit 2 and stores nothing', async (url, insecure, message) => {
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
    await pool.query(
      `update webhook_endpoints set enabled = false, consecutive_failures = 20, disabled_reason = '20 deliveries in a row failed' where id = $1`,
      [id],
    );
    const listed = await runCli(['webhook', 'list', '--workspace', ws], env);
    expect(listed.stdout).toMatch(new RegExp(`${id}.*no\\s+20\\s+20 deliveries in a row failed`));
    const r = await runCli(['webhook', 'enable', id], env);
    expect(r.code).toBe(0);
    const row = (await pool.query('select enabled, consecutive_failures, disabled_reason from webhook_endpoints where id = $1', [id])).rows[0];
    expect(row).toEqual({ enabled: true, consecutive_failures: 0, disabled_reason: null });
    expect((await auditOf(id)).map((e) => e.action)).toEqual(['webhook_endpoint.create', 'webhook_endpoint.enable']);
  });

  it('refuses a loopback receiver with ALLOW_INSECURE_OUTBOUND_URLS off, naming the variable; sandbox mode allows it', async () => {
    const strict = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://127.0.0.1:3499/hook'], strictEnv);
    expect(strict.code).toBe(2);
    expect(strict.stderr.trim().split('\n')).toHaveLength(1);
    expect(strict.stderr).toMatch(/^--url: refused: the URL must use https; set ALLOW_INSECURE_OUTBOUND_URLS=1/);
    // SANDBOX=1 (as without DATABASE_URL) allows it unless the variable is set.
    const sandbox = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://127.0.0.1:3499/hook'], {
      ...strictEnv,
      ALLOW_INSECURE_OUTBOUND_URLS: '',
      SANDBOX: '1',
    });
    expect(sandbox.stderr).toBe('');
    expect(sandbox.code).toBe(0);
    const off = await runCli(['webhook', 'add', '--workspace', ws, '--url', 'http://127.0.0.1:3499/hook'], { ...strictEnv, SANDBOX: '1' });
    expect(off.code).toBe(2);
  });

  it('list without --workspace shows every workspace; a bad flag names the real command', async () => {
    const other = (await createWorkspace(pool, 'Other Inc')).id;
    const add = await runCli(['webhook', 'add', '--workspace', other, '--url', 'http://127.0.0.1:9/other'], env);
    expect(add.code).toBe(0);
    const all = await runCli(['webhook', 'list'], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^ID\s+WORKSPACE\s+URL/);
    expect(all.stdout).toMatch(new RegExp(`${other}\\s+http://127.0.0.1:9/other`));
    expect(all.stdout).toContain(ws);
    const one = await runCli(['webhook', 'list', '--workspace', other], env);
    expect(one.stdout).not.toContain(ws);
    const bad = await runCli(['webhook', 'list', '--bogus'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('(run sigsync webhook list --help for usage)');
  });

  it('deliveries lists the attempts of an endpoint; redeliver queues one delivery, or the failed ones since a time, with the same id', async () => {
    const receiver = await startReceiver(() => 400);
    try {
      const add = await runCli(['webhook', 'add', '--workspace', ws, '--url', `${receiver.url}/in`, '--events', 'teammate.created'], env);
      const endpointId = /webhook endpoint\s+(\S+)/.exec(add.stdout)![1]!;
      await emitEvent(pool, ws, 'teammate.created', teammateBody());
      await emitEvent(pool, ws, 'teammate.created', teammateBody('Grace Hopper'));
      await dispatchWorkspace(pool, ws);
      const app = { pool, secrets: new Secrets(Buffer.from(TEST_KEY, 'hex')), config: testConfig({ ALLOW_INSECURE_OUTBOUND_URLS: '1' }) };
      const ids = (await pool.query<{ id: string }>('select id from webhook_deliveries where endpoint_id = $1 order by created_at', [endpointId])).rows.map(
        (r) => r.id,
      );
      expect(ids).toHaveLength(2);
      for (const id of ids) expect(await deliverOnce(app, id, createLogger('silent'))).toBe('failed');

      const list = await runCli(['webhook', 'deliveries', endpointId, '--failed'], env);
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toMatch(/^DELIVERY\s+EVENT\s+STATUS\s+ATTEMPT\s+OUTCOME\s+CODE\s+DURATION\s+AT\s+ERROR/);
      for (const id of ids)
        expect(list.stdout).toMatch(new RegExp(`${id}\\s+teammate.created\\s+failed\\s+1\\s+failed\\s+400\\s+\\d+ ms .*HTTP 400 Bad Request`));

      const one = await runCli(['webhook', 'redeliver', ids[0]!], env);
      expect(one.code, one.stderr).toBe(0);
      expect(one.stdout).toContain(`redelivery queued: ${ids[0]} (teammate.created) to endpoint ${endpointId}, same webhook-id`);
      const job = await pool.query(`select task_identifier from graphile_worker.jobs where key = $1`, [`deliver_webhook:${ids[0]}`]);
      expect(job.rows).toEqual([{ task_identifier: 'deliver_webhook' }]);
      expect((await runCli(['webhook', 'deliveries', endpointId, '--failed'], env)).stdout).not.toContain(ids[0]);
      const again = await runCli(['webhook', 'redeliver', ids[0]!], env);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/still pending/);

      const bulk = await runCli(['webhook', 'redeliver', '--failed-since', '1h', '--endpoint', endpointId], env);
      expect(bulk.code, bulk.stderr).toBe(0);
      expect(bulk.stdout).toMatch(/^1 failed delivery since \S+ queued again/);
      expect(bulk.stdout).toContain(ids[1]);
      const statuses = (await pool.query('select status from webhook_deliveries where endpoint_id = $1', [endpointId])).rows.map((r) => r.status);
      expect(statuses).toEqual(['pending', 'pending']);
    } finally {
      await receiver.close();
    }
  });

  it('redeliver refuses bad input with one line and exit 2', async () => {
    for (const args of [
      ['redeliver'],
      ['redeliver', '--failed-since', 'yesterday'],
      ['redeliver', 'nope'],
      ['deliveries', '00000000-0000-4000-8000-000000000000'],
    ]) {
      const r = await runCli(['webhook', ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
    expect(parseSince('2h', Date.parse('2026-03-01T12:00:00Z')).toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(parseSince('2026-03-01T09:00Z').toISOString()).toBe('2026-03-01T09:00:00.000Z');
  });
});
