/**
 * The add-in's signature fetch: who may ask (Entra tokens verified against the emulated tenant's
 * keys, add-in keys), variants, ETag and 304, install status per platform, and the rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { captureLogger } from '../helpers/logs.ts';
import { installMailbox } from '../../src/install/install.ts';
import { forgetRecordedFetches } from '../../src/addin/clients.ts';
import { withTx } from '../../src/db/tx.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import { useApi, seedTeammate, tree } from '../api/helpers.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import { ANN_OID, BOB_OID, CLIENT_ID, seedAddinWorld, type AddinWorld } from './fixtures.ts';

describe('GET /v1/addin/signature', () => {
  const api = useApi({ ADDIN_ENTRA_CLIENT_ID: CLIENT_ID, ADDIN_CACHE_SECONDS: '0', RATE_LIMIT_ADDIN: '20' });
  let w: AddinWorld;
  let annToken: string;

  const get = async (email: string, bearer: string, headers: Record<string, string> = {}, query = '') => {
    const r = await fetch(`${api.base}/v1/addin/signature?email=${encodeURIComponent(email)}${query}`, {
      headers: { authorization: `Bearer ${bearer}`, ...headers },
    });
    const text = await r.text();
    return { status: r.status, etag: r.headers.get('etag'), body: text ? JSON.parse(text) : null, text };
  };

  beforeAll(async () => {
    w = await seedAddinWorld(api.t.ctx, api.ws);
    annToken = await w.token(ANN_OID, 'ann@acme.test');
  });
  afterAll(async () => w?.emulator.close());

  describe('with an Entra token', () => {
    it('answers the signed-in user own address with every variant and the workspace domains', async () => {
      const r = await get('ann@acme.test', annToken);
      expect(r.status, r.text).toBe(200);
      expect(r.body.data).toMatchObject({ email: 'ann@acme.test', signature_id: w.signatureId, kind: 'primary', internal_domains: ['acme.test'] });
      expect(Object.keys(r.body.data.variants).sort()).toEqual(['internal', 'primary', 'reply']);
      expect(r.body.data.variants.primary.html).toContain('Regards from Acme');
      expect(r.body.data.variants.reply.html).toContain('Thanks, Acme');
      expect(r.body.data.variants.internal.html).toContain('Cheers');
      expect(r.etag).toMatch(/^"[\w-]{32}"$/);
    });

    it('serves only the variants that are activated and published, and a higher-priority signature wins', async () => {
      const { pool } = api.t.ctx;
      await pool.query(`update signature_variants set activated = false where signature_id = $1 and kind = 'internal'`, [w.signatureId]);
      const other = await insertSignature(pool, api.ws, { name: 'Sales', draftContent: tree('Sales team'), published: true });
      try {
        const without = await get('ann@acme.test', annToken);
        expect(Object.keys(without.body.data.variants).sort()).toEqual(['primary', 'reply']);
        await assignToTeammate(pool, api.ws, other, w.ann.id, 5);
        const won = await get('ann@acme.test', annToken);
        expect(won.body.data).toMatchObject({ signature_id: other });
        expect(Object.keys(won.body.data.variants)).toEqual(['primary']);
        expect(won.body.data.html).toContain('Sales team');
      } finally {
        await pool.query(`update signature_variants set activated = true where signature_id = $1 and kind = 'internal'`, [w.signatureId]);
        await pool.query(`delete from assignments where signature_id = $1`, [other]);
        await pool.query(`delete from signatures where id = $1`, [other]);
      }
    });

    it('allows her alias and the shared mailbox, refuses a colleague address', async () => {
      expect((await get('ann.sales@acme.test', annToken)).status).toBe(200);
      const shared = await get('info@acme.test', annToken);
      expect(shared.status).toBe(200);
      expect(shared.body.data.html).toContain('Regards from Acme');
      const other = await get('bob@acme.test', annToken);
      expect(other.status).toBe(403);
      expect(other.body.error.code).toBe('address_not_allowed');
      // Bob's own token reads Bob's.
      expect((await get('bob@acme.test', await w.token(BOB_OID, 'bob@acme.test'))).status).toBe(200);
    });

    it('refuses a token of another tenant, for another audience, expired, unsigned or forged', async () => {
      const cases: [string, string][] = [
        ['wrong tenant', await w.token(ANN_OID, 'ann@acme.test', { tenantId: '99999999-9999-4999-8999-999999999999' })],
        ['wrong audience', await w.token(ANN_OID, 'ann@acme.test', { audience: 'api://elsewhere.test/other' })],
        ['expired', await w.token(ANN_OID, 'ann@acme.test', { expiresIn: -600 })],
      ];
      const [, payload] = annToken.split('.');
      cases.push(['unsigned', `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`]);
      const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
      const forgedPayload = Buffer.from(JSON.stringify({ ...claims, oid: BOB_OID, preferred_username: 'bob@acme.test' })).toString('base64url');
      cases.push(['forged', `${annToken.split('.')[0]}.${forgedPayload}.${annToken.split('.')[2]}`]);
      for (const [what, token] of cases) {
        const r = await get('ann@acme.test', token);
        expect(r.status, what).toBe(401);
        expect(r.body.error.code, what).toBe(what === 'wrong tenant' ? 'unknown_tenant' : 'invalid_token');
      }
    });
  });

  describe('caching and install status', () => {
    it('answers 304 for the current ETag, 200 once the signature changes', async () => {
      const first = await get('ann@acme.test', annToken);
      const again = await get('ann@acme.test', annToken, { 'if-none-match': first.etag! });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      await api.t.ctx.pool.query(`update signatures set content = $2, last_published_at = now() where id = $1`, [
        w.signatureId,
        JSON.stringify(tree('New regards')),
      ]);
      const changed = await get('ann@acme.test', annToken, { 'if-none-match': first.etag! });
      expect(changed.status).toBe(200);
      expect(changed.etag).not.toBe(first.etag);
      expect(changed.body.data.html).toContain('New regards');
    });

    it('is pending until the add-in fetches, then installed per platform; a republish makes it pending again', async () => {
      const { pool } = api.t.ctx;
      const job = (kind: 'primary' | 'reply') => ({ workspaceId: api.ws, emailId: w.bob.emailIds[0]!, kind, integrationId: w.outlook, forced: false });
      // Bob's add-in last fetched before the primary signature changed (the test above): pending until it fetches again.
      await pool.query(`delete from installations where email_id = $1`, [w.bob.emailIds[0]]);
      await pool.query(`delete from addin_clients where email_id = $1`, [w.bob.emailIds[0]]);
      expect(await installMailbox(api.t.ctx, job('primary'))).toMatchObject({ outcome: 'skipped', status: 'pending' });
      expect(await installMailbox(api.t.ctx, job('reply'))).toMatchObject({ outcome: 'skipped', status: 'pending' });
      const status = async () =>
        (await pool.query(`select kind, status from installations where email_id = $1 and integration_id = $2 order by kind`, [w.bob.emailIds[0], w.outlook]))
          .rows;
      expect(await status()).toEqual([
        { kind: 'primary', status: 'pending' },
        { kind: 'reply', status: 'pending' },
      ]);
      forgetRecordedFetches(api.t.ctx);

      const bobToken = await w.token(BOB_OID, 'bob@acme.test');
      expect((await get('bob@acme.test', bobToken, {}, '&platform=windows&client_version=16.0.18025.20000')).status).toBe(200);
      expect(await status()).toEqual([
        { kind: 'internal', status: 'installed' },
        { kind: 'primary', status: 'installed' },
        { kind: 'reply', status: 'installed' },
      ]);
      const clients = async () =>
        (await pool.query(`select platform, client_version from addin_clients where email_id = $1 order by platform`, [w.bob.emailIds[0]])).rows;
      expect(await clients()).toEqual([{ platform: 'windows', client_version: '16.0.18025.20000' }]);
      await get('bob@acme.test', bobToken, {}, '&platform=ios&client_version=4.2502.0');
      expect(await clients()).toEqual([
        { platform: 'ios', client_version: '4.2502.0' },
        { platform: 'windows', client_version: '16.0.18025.20000' },
      ]);

      await pool.query(`update signatures set content = $2, last_published_at = now() where id = $1`, [w.signatureId, JSON.stringify(tree('Republished'))]);
      expect(await installMailbox(api.t.ctx, job('primary'))).toMatchObject({ outcome: 'skipped', status: 'pending' });
      expect((await status()).find((r) => r.kind === 'primary')).toEqual({ kind: 'primary', status: 'pending' });
      await get('bob@acme.test', bobToken, {}, '&platform=web&client_version=x');
      expect((await status()).find((r) => r.kind === 'primary')).toEqual({ kind: 'primary', status: 'installed' });

      const cli = await runCli(['install', 'status', '--email', 'bob@acme.test'], {
        DATABASE_URL: api.t.url,
        ENCRYPTION_KEY: TEST_KEY,
        ADDIN_CACHE_SECONDS: '0',
      });
      expect(cli.code, cli.stderr).toBe(0);
      const lines = cli.stdout.split('\n');
      expect(lines.find((l) => l.startsWith('web'))).toMatch(/^web\s+x\s+\S.*\scurrent$/);
      expect(lines.find((l) => l.startsWith('windows'))).toMatch(/^windows\s+16\.0\.18025\.20000\s+\S.*\solder$/);
      expect(lines.find((l) => l.startsWith('ios'))).toMatch(/^ios\s+4\.2502\.0\s+\S.*\solder$/);
    });
  });

  it('a new Microsoft signatures integration uses the add-in; owa is asked for by name', async () => {
    const connect = (kind: 'microsoft_entra' | 'google_workspace', config: Record<string, unknown>) =>
      withTx(api.t.ctx.pool, (c) =>
        insertIntegration(api.t.ctx, c, {
          workspaceId: api.otherWs,
          kind,
          category: 'signatures',
          name: `${kind} ${JSON.stringify(config)}`,
          credentials: {},
          config,
        }),
      );
    expect((await connect('microsoft_entra', {})).config.mode).toBe('addin');
    expect((await connect('microsoft_entra', { mode: 'owa' })).config.mode).toBe('owa');
    expect((await connect('google_workspace', {})).config.mode).toBeUndefined();
  });

  describe('with an add-in key (key-only mode)', () => {
    it('answers a real address without a signature exactly as an unknown one', async () => {
      const key = (await createApiKey(api.t.ctx.pool, api.ws, 'addin', 'addin')).key;
      await seedTeammate(api.t.ctx.pool, api.ws, 'Zed', [{ address: 'zed@acme.test', primary: true }]);
      const real = await get('zed@acme.test', key);
      const unknown = await get('nobody-here@acme.test', key);
      expect(real.status).toBe(200);
      expect(unknown.status).toBe(200);
      expect({ ...real.body.data, email: null }).toEqual({ ...unknown.body.data, email: null });
      expect(real.body.data.html).toBeNull();
      // With a signature the key reads any address of the workspace.
      expect((await get('bob@acme.test', key)).body.data.html).toContain('Republished');
    });

    it('answers 429 past RATE_LIMIT_ADDIN requests a minute for one key, mailbox and address', async () => {
      const key = (await createApiKey(api.t.ctx.pool, api.ws, 'limited', 'addin')).key;
      const statuses: number[] = [];
      for (let i = 0; i < 22; i++) statuses.push((await get('bob@acme.test', key)).status);
      expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
      expect(statuses.slice(20)).toEqual([429, 429]);
      // Another key is counted apart.
      const other = (await createApiKey(api.t.ctx.pool, api.ws, 'other', 'addin')).key;
      expect((await get('bob@acme.test', other)).status).toBe(200);
    });
  });

  it('logs the problem an add-in reports with its fetch, against the address and client, and answers as ever', async () => {
    const { logger, lines } = captureLogger({ redact: false });
    const server = await buildServer({ ...api.t.ctx, logger });
    const base = await server.listen({ host: '127.0.0.1', port: 0 });
    try {
      const key = (await createApiKey(api.t.ctx.pool, api.ws, 'reporting', 'addin')).key;
      const ask = (query: string) =>
        fetch(`${base}/v1/addin/signature?email=bob%40acme.test&platform=windows&client_version=16.0.1${query}`, {
          headers: { authorization: `Bearer ${key}` },
        });
      const said = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'the Outlook add-in reported a problem');
      const problem = `fetch failed\u202e; using the last good copy\n${'x'.repeat(400)}`;
      expect((await ask(`&problem=${encodeURIComponent(problem)}&problem_at=2026-11-26T09:00:00.000Z`)).status).toBe(200);
      expect(said()).toEqual([
        expect.objectContaining({
          workspaceId: api.ws,
          email: 'bob@acme.test',
          platform: 'windows',
          client_version: '16.0.1',
          problem_at: '2026-11-26T09:00:00.000Z',
          problem: `fetch failed; using the last good copy ${'x'.repeat(400)}`.slice(0, 300),
        }),
      ]);
      // A malformed time is dropped, not refused; a fetch without a problem logs none.
      expect((await ask(`&problem=completed()%20failed&problem_at=yesterday`)).status).toBe(200);
      expect((await ask('')).status).toBe(200);
      expect(said().map((l) => [l.problem, l.problem_at])).toEqual([
        [expect.any(String), '2026-11-26T09:00:00.000Z'],
        ['completed() failed', null],
      ]);
    } finally {
      await server.close();
    }
  });
});
