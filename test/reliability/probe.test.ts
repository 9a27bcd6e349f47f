/**
 * The outside probe (issue #20), kept: what it found, replayed against the real server and guards.
 * (The publish storm that deadlocked fan-outs is publishStorm.test.ts.)
 *
 * 1. SSRF: 44 address forms (IPv4 spellings, IPv6 forms embedding IPv4, private, link-local,
 *    reserved, names resolving there) under both settings of ALLOW_INSECURE_OUTBOUND_URLS. Registration
 *    (`webhook add`'s check) and delivery (a real attempt through the guarded socket) give the same
 *    verdict for every one; IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) forms are
 *    refused; http://[::ffff:127.0.0.1]:PORT/h is registered and delivered with the flag. Photo
 *    downloads and integration config URLs get the same rule.
 * 2. Values checked by their smart field's kind, from the API (422 naming the field) and from a
 *    directory (left empty, reported on the run); integration_attribute needs integration_id.
 * 3. Strict integers in query strings, the spec's error body for errors raised before routing (bad
 *    URL, over-long segment, raw byte, 404, 413, 415, 500), validation details capped at 100, and
 *    bidi overrides removed from the preview page's title and fact sheet.
 * 4. Rate limits per API key with the default settings: 200 publishes in a burst, sync and install
 *    bursts, the general limit; 429 with Retry-After and the error body.
 */
import { VALUE_ROWS, teammateValues } from '../helpers/fixtures/teammates.ts';
import dns from 'node:dns';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { slackPhotoSource } from '../../connectors/slack/photos.ts';
import { InvalidResponseError } from '../../connectors/types.ts';
import { buildServer } from '../../src/api/server.ts';
import { loadConfig } from '../../src/config.ts';
import { attemptDelivery } from '../../src/webhooks/delivery.ts';
import { UnsafeUrlError, validateWebhookUrl, type UrlPolicy } from '../../src/net/ssrf.ts';
import { IntegrationSetupError, validateSetup } from '../../src/integrations/integrations.ts';
import { integrationUrlPolicy, validateIntegrationUrls } from '../../src/integrations/urls.ts';
import { previewPage } from '../../src/render/preview.ts';
import { renderSignature } from '../../src/render/render.ts';
import { startGoogleEmulator, generateGoogleTenant, type GoogleEmulator } from '../../emulators/google.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { seedTeammate, useApi } from '../api/helpers.ts';
import { connectGoogle } from '../helpers/fixtures.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/** Makes `name` resolve to `address` for the code under test. */
function resolveTo(names: Record<string, string>) {
  const real = dns.promises.lookup.bind(dns.promises);
  vi.spyOn(dns.promises, 'lookup').mockImplementation(((host: string, opts?: dns.LookupAllOptions) => {
    const address = names[host];
    if (address === undefined) return real(host, opts as dns.LookupAllOptions);
    const family = address.includes(':') ? 6 : 4;
    return Promise.resolve(opts?.all ? [{ address, family }] : { address, family });
  }) as typeof dns.promises.lookup);
}

describe('probe: SSRF address forms', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await receiver?.close();
  });

  /** Hosts that are loopback: allowed with ALLOW_INSECURE_OUTBOUND_URLS, refused without. */
  const LOOPBACK = [
    '127.0.0.1',
    '127.1',
    '2130706433',
    '0x7f000001',
    '0177.0.0.1',
    '127.255.255.254',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    'localhost',
    'loopback.probe.test',
  ];
  /** Hosts refused whatever the setting. */
  const REFUSED = [
    // IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96): the probe's two findings.
    '[::127.0.0.1]',
    '[::7f00:1]',
    '[::ffff:0:127.0.0.1]',
    '[::ffff:0:7f00:1]',
    '[::10.0.0.1]',
    '[::ffff:0:10.0.0.1]',
    // Other IPv6 forms that embed an IPv4 address: NAT64, 6to4, Teredo.
    '[64:ff9b::7f00:1]',
    '[2002:7f00:1::1]',
    '[2001:0:7f00:1::1]',
    // Private, carrier-grade NAT, unique local, and their mapped forms.
    '10.0.0.1',
    '172.16.0.1',
    '192.168.0.1',
    '100.64.0.1',
    '[fd00::1]',
    '[fc00::1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:192.168.1.1]',
    // Link-local (cloud metadata), in several spellings.
    '169.254.169.254',
    '0xA9FEA9FE',
    '[fe80::1]',
    '[::ffff:169.254.169.254]',
    // Unspecified, multicast, broadcast, reserved, documentation, benchmarking, discard, site-local.
    '0.0.0.0',
    '0',
    '[::]',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '[ff02::1]',
    '[2001:db8::1]',
    '[fec0::1]',
    '[100::1]',
    // Names that resolve there.
    'compat.probe.test',
    'translated.probe.test',
    'private.probe.test',
    'metadata.probe.test',
    'ula.probe.test',
  ];
  const NAMES = {
    'loopback.probe.test': '127.0.0.1',
    'compat.probe.test': '::7f00:1',
    'translated.probe.test': '::ffff:0:7f00:1',
    'private.probe.test': '10.0.0.1',
    'metadata.probe.test': '169.254.169.254',
    'ula.probe.test': 'fd00::1',
  };

  const registered = (url: string, policy: UrlPolicy) =>
    validateWebhookUrl(url, policy).then(
      () => 'allowed',
      (e: unknown) => (e instanceof UnsafeUrlError ? 'refused' : `error ${String(e)}`),
    );
  const delivered = async (url: string, policy: UrlPolicy) => {
    // A delivery that times out has no status either: the timeout is long enough for a busy machine's loopback.
    const r = await attemptDelivery({ url, secret: SECRET, messageId: 'msg_probe', body: '{}', allowInsecure: policy.allowInsecure, timeoutMs: 10_000 });
    // A refusal by the guard fails at once without a status; anything else got past it.
    return r.verdict === 'failed' && r.statusCode === null ? 'refused' : 'allowed';
  };

  it(`registration and delivery agree on ${LOOPBACK.length + REFUSED.length} address forms, under both settings`, async () => {
    resolveTo(NAMES);
    const disagreements: string[] = [];
    const wrong: string[] = [];
    let checked = 0;
    for (const allowInsecure of [false, true]) {
      const policy = { allowInsecure };
      for (const host of [...LOOPBACK, ...REFUSED]) {
        for (const scheme of allowInsecure ? ['http', 'https'] : ['https']) {
          const url = `${scheme}://${host}:${receiver.port}/h`;
          const [reg, del] = [await registered(url, policy), await delivered(url, policy)];
          checked++;
          if (reg !== del) disagreements.push(`${url} (insecure ${allowInsecure}): registration ${reg}, delivery ${del}`);
          // http is for hosts that are loopback without asking DNS (a literal, localhost).
          const expected = allowInsecure && LOOPBACK.includes(host) && !(scheme === 'http' && host in NAMES) ? 'allowed' : 'refused';
          if (reg !== expected) wrong.push(`${url} (insecure ${allowInsecure}): ${reg}, expected ${expected}`);
        }
      }
    }
    console.log(
      `probe SSRF: ${LOOPBACK.length + REFUSED.length} address forms, ${checked} (URL, setting) pairs; registration and delivery disagree expected 0 observed ${disagreements.length}; wrong verdicts expected 0 observed ${wrong.length}`,
    );
    expect(wrong).toEqual([]);
    expect(disagreements).toEqual([]);
  });

  it('http://[::ffff:127.0.0.1]:PORT/h with ALLOW_INSECURE_OUTBOUND_URLS: registered, and delivered', async () => {
    const url = `http://[::ffff:127.0.0.1]:${receiver.port}/h`;
    await expect(validateWebhookUrl(url, { allowInsecure: true })).resolves.toBeInstanceOf(URL);
    const before = receiver.received.length;
    const r = await attemptDelivery({ url, secret: SECRET, messageId: 'msg_mapped', body: '{}', allowInsecure: true, timeoutMs: 5_000 });
    expect(r).toMatchObject({ verdict: 'succeeded', statusCode: 200 });
    expect(receiver.received.length).toBe(before + 1);
  });

  it('photo downloads from a Slack image host resolving to any refused form are refused', async () => {
    const source = slackPhotoSource.create({
      config: { base_url: 'https://slack.com/api/' } as never,
      credentials: { bot_token: 'xoxb-unused' } as never,
      logger: undefined as never,
    });
    const refused: string[] = [];
    for (const address of ['::7f00:1', '::ffff:0:7f00:1', '127.0.0.1', '10.0.0.1', '169.254.169.254', 'fd00::1', '::ffff:a9fe:a9fe']) {
      vi.restoreAllMocks();
      resolveTo({ 'avatars.slack-edge.com': address });
      const err = await source.fetchPhoto({ externalId: 'U1', photo: { url: 'https://avatars.slack-edge.com/p.png' } }).catch((e: unknown) => e);
      if (err instanceof InvalidResponseError && /refused/.test(err.message)) refused.push(address);
    }
    vi.restoreAllMocks();
    expect(refused).toHaveLength(7);
  });

  it('integration config URLs: https only, loopback with the flag (or in the sandbox), private only with ALLOW_PRIVATE_INTEGRATION_URLS, link-local never', async () => {
    const verdict = async (config: Record<string, unknown>, policy: UrlPolicy) => {
      try {
        validateSetup('slack', 'teammates', { bot_token: 'xoxb-1' }, config, policy);
        await validateIntegrationUrls(config, policy);
        return 'allowed';
      } catch (e) {
        if (e instanceof IntegrationSetupError || (e as Error).name === 'IntegrationUrlError') return 'refused';
        throw e;
      }
    };
    const strict = integrationUrlPolicy(loadConfig({ DATABASE_URL: 'postgres://x/y' }));
    const tests = integrationUrlPolicy(loadConfig({ DATABASE_URL: 'postgres://x/y', ALLOW_INSECURE_OUTBOUND_URLS: '1' }));
    const sandbox = integrationUrlPolicy(loadConfig({}));
    const onPrem = integrationUrlPolicy(loadConfig({ DATABASE_URL: 'postgres://x/y', ALLOW_PRIVATE_INTEGRATION_URLS: '1' }));
    expect(await verdict({ base_url: 'http://127.0.0.1:3499/api/' }, strict)).toBe('refused');
    expect(await verdict({ base_url: 'https://127.0.0.1/api/' }, strict)).toBe('refused');
    expect(await verdict({ base_url: 'http://127.0.0.1:3499/api/' }, tests)).toBe('allowed');
    expect(await verdict({ base_url: 'http://127.0.0.1:3499/api/' }, sandbox)).toBe('allowed');
    expect(await verdict({ base_url: 'http://10.0.0.5/api/' }, onPrem)).toBe('refused');
    expect(await verdict({ base_url: 'https://10.0.0.5/api/' }, strict)).toBe('refused');
    expect(await verdict({ base_url: 'https://10.0.0.5/api/' }, onPrem)).toBe('allowed');
    expect(await verdict({ base_url: 'https://[fd00::5]/api/' }, onPrem)).toBe('allowed');
    expect(await verdict({ base_url: 'https://169.254.169.254/api/' }, onPrem)).toBe('refused');
    expect(await verdict({ base_url: 'https://[::ffff:0:10.0.0.5]/api/' }, onPrem)).toBe('refused');
    expect(await verdict({ token_url: 'ftp://files.example.com/' }, tests)).toBe('refused');
    resolveTo({ 'gateway.probe.test': '10.1.2.3' });
    expect(await verdict({ base_url: 'https://gateway.probe.test/api/' }, strict)).toBe('refused');
    expect(await verdict({ base_url: 'https://gateway.probe.test/api/' }, onPrem)).toBe('allowed');
    vi.restoreAllMocks();
    expect(strict).toEqual({ allowInsecure: false, allowPrivate: false });
  });
});

describe('probe: values by kind, strict input, uniform errors', () => {
  const api = useApi();
  let google: GoogleEmulator;
  const fields = {} as Record<'website' | 'photo' | 'email' | 'phone' | 'note', string>;
  let teammate: string;

  beforeAll(async () => {
    const pool = api.t.ctx.pool;
    for (const [slug, kind] of [
      ['website', 'url'],
      ['photo', 'image'],
      ['email', 'email'],
      ['phone', 'phone'],
      ['note', 'text'],
    ] as const) {
      fields[slug] = await insertSmartField(pool, api.ws, { slug, kind });
    }
    teammate = (await seedTeammate(pool, api.ws, 'Ada Lovelace')).id;
  });
  afterAll(async () => {
    await google?.close();
  });

  it('PATCH /v1/teammates/{id} refuses values that do not fit their kind with 422 naming the field, and stores nothing', async () => {
    const bad = [
      { smart_field_id: fields.website, value: 'javascript:alert(1)' },
      { smart_field_id: fields.photo, value: 'data:image/svg+xml,<svg onload=alert(1)>' },
      { smart_field_id: fields.email, value: 'a@b.c"><script>' },
      { smart_field_id: fields.phone, value: '<img src=x onerror=alert(1)>' },
    ];
    const r = await api.call('PATCH', `/v1/teammates/${teammate}`, {
      teammate: { smart_fields: [...bad, { smart_field_id: fields.note, value: '<b>any text</b>' }] },
    });
    expect(r.status).toBe(422);
    expect((r.body as { details: { field: string; code: string }[] }).details.map((d) => [d.field, d.code])).toEqual([
      ['teammate.smart_fields[0].value', 'invalid_value'],
      ['teammate.smart_fields[1].value', 'invalid_value'],
      ['teammate.smart_fields[2].value', 'invalid_value'],
      ['teammate.smart_fields[3].value', 'invalid_value'],
    ]);
    expect(await teammateValues(api.t.ctx.pool, teammate)).toEqual({});

    const good = [
      { smart_field_id: fields.website, value: 'https://acme.test/jobs' },
      { smart_field_id: fields.photo, value: 'https://cdn.acme.test/ada.png' },
      { smart_field_id: fields.email, value: 'ada@acme.test' },
      { smart_field_id: fields.phone, value: '+44 20 7946 0018 ext. 12' },
    ];
    const ok = await api.call('PATCH', `/v1/teammates/${teammate}`, { teammate: { smart_fields: good } });
    expect(ok.status).toBe(200);
    expect(
      await api.call('PATCH', `/v1/teammates/${teammate}`, { teammate: { smart_fields: [{ smart_field_id: fields.website, value: 'acme.test/careers' }] } }),
    ).toMatchObject({ status: 200 });
  });

  it('directory values that do not fit their kind are left empty and reported on the run, never stored', async () => {
    const tenant = generateGoogleTenant(4, 'kinds.test');
    const titles = ['javascript:alert(1)', 'https://acme.test/u1', 'data:image/svg+xml,<svg onload=alert(1)>', 'https://acme.test/u3'];
    tenant.users.forEach((u, i) => (u.organizations = [{ title: titles[i]!, primary: true }]));
    google = await startGoogleEmulator(tenant);
    const ctx = api.t.ctx;
    const ws = (await createWorkspace(ctx.pool, 'Kinds')).id;
    const integration = await connectGoogle(ctx, ws, google.url);
    const url = await insertSmartField(ctx.pool, ws, {
      label: 'Link',
      slug: 'link',
      kind: 'url',
      integrationId: integration.id,
      integrationAttribute: 'organizations.primary.title',
    });
    const [run] = await startRuns(ctx.pool, ws, [integration.id], { trigger: 'cli' });
    const done = (await executeRun(ctx, run!.id, { retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 } }))!;
    const stored = (await ctx.pool.query<{ value: string }>(`select value from ${VALUE_ROWS} v where smart_field_id = $1 order by value`, [url])).rows.map(
      (r) => r.value,
    );
    console.log(
      `probe kinds: directory values 4 (2 not URLs); stored expected 2 observed ${stored.length}; reported on the run expected 2 observed ${done.errors}`,
    );
    expect(done.status).toBe('succeeded');
    expect(stored).toEqual(['https://acme.test/u1', 'https://acme.test/u3']);
    expect(done.errors).toBe(2);
    expect(done.error_details.map((d) => d.message)).toEqual([
      expect.stringMatching(/^organizations\.primary\.title: the value is not an http\(s\) URL.*; left empty$/),
      expect.stringMatching(/left empty$/),
    ]);
    expect(JSON.stringify(done.error_details)).not.toMatch(/javascript|svg/);
  });

  it('integration_attribute without integration_id is refused', async () => {
    const r = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Region', integration_attribute: 'customSchemas.Sales.Region' } });
    expect(r.status).toBe(422);
    expect((r.body as { details: { field: string; code: string }[] }).details).toEqual([
      expect.objectContaining({ field: 'smart_field.integration_attribute', code: 'requires_integration' }),
    ]);
    const p = await api.call('PATCH', `/v1/smart_fields/${fields.note}`, { smart_field: { integration_attribute: 'jobTitle' } });
    expect(p.status).toBe(422);
  });

  it('integer query parameters are digits only, or 422 naming the parameter', async () => {
    const refused: string[] = [];
    for (const path of ['/v1/teammates', '/v1/integrations', '/v1/signatures']) {
      for (const [name, value] of [
        ['page', '1e3'],
        ['page', '0x10'],
        ['page', '%201'],
        ['page', '+1'],
        ['page', '1.0'],
        ['page', '-1'],
        ['page', '0'],
        ['page', '99999999999999999999'],
        ['per_page', '101'],
        ['per_page', '1e1'],
        ['per_page', ''],
      ]) {
        const r = await api.call('GET', `${path}?${name}=${value}`);
        const details = (r.body as { details?: { field: string }[] }).details ?? [];
        if (r.status === 422 && details.some((d) => d.field === name)) refused.push(`${path}?${name}=${value}`);
        else expect.fail(`${path}?${name}=${value} answered ${r.status} ${r.text}`);
      }
      expect((await api.call('GET', `${path}?page=2&per_page=5`)).status).toBe(200);
    }
    expect(refused).toHaveLength(33);
  });

  /** A raw HTTP/1.1 exchange, for requests fetch would refuse or rewrite. */
  function raw(request: Buffer | string): Promise<{ status: number; body: string }> {
    const { port } = new URL(api.base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
      let data = '';
      socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head, ...rest] = data.split('\r\n\r\n');
        const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1] ?? 0);
        const body = rest.join('\r\n\r\n');
        // A chunked body: join the chunks.
        resolve({ status, body: /transfer-encoding: chunked/i.test(head ?? '') ? body.replace(/(^|\r\n)[0-9a-f]+\r\n/gi, '').replace(/\r\n$/, '') : body });
      });
    });
  }

  it('every error answers {error: {type, code, message}}, also those raised before routing', async () => {
    const host = `Host: 127.0.0.1\r\nConnection: close\r\n`;
    const long = 'a'.repeat(2000);
    const cases: [string, Promise<{ status: number; body: string }>, number][] = [
      ['bad URL', raw(`GET /assets/%ff%fe HTTP/1.1\r\n${host}\r\n`), 400],
      ['over-long path segment', raw(`GET /assets/${long} HTTP/1.1\r\n${host}\r\n`), 414],
      ['over-long id', raw(`DELETE /v1/teammates/${long} HTTP/1.1\r\n${host}Authorization: Bearer ${api.key}\r\n\r\n`), 414],
      [
        'raw UTF-8 byte in the query',
        raw(Buffer.concat([Buffer.from('GET /v1/teammates?name='), Buffer.from([0xc3, 0xa9]), Buffer.from(` HTTP/1.1\r\n${host}\r\n`)])),
        400,
      ],
      ['no route', raw(`GET /nope HTTP/1.1\r\n${host}\r\n`), 404],
      ['no key', raw(`GET /v1/teammates HTTP/1.1\r\n${host}\r\n`), 401],
      [
        'body too large',
        api.raw('POST', '/v1/signatures', JSON.stringify({ signature: { name: 'x'.repeat(1_200_000) } })).then((r) => ({ status: r.status, body: r.text })),
        413,
      ],
      [
        'media type',
        raw(`POST /v1/signatures HTTP/1.1\r\n${host}Authorization: Bearer ${api.key}\r\nContent-Type: application/xml\r\nContent-Length: 4\r\n\r\n<a/>`),
        415,
      ],
    ];
    const shapes: string[] = [];
    for (const [what, pending, status] of cases) {
      const r = await pending;
      if (!r.body.startsWith('{')) expect.fail(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
      const body = JSON.parse(r.body) as { error?: { type?: unknown; code?: unknown; message?: unknown } };
      expect(r.status, what).toBe(status);
      expect(body.error, `${what}: ${r.body}`).toEqual({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
      expect(r.body, what).not.toContain(long);
      expect(r.body, what).not.toMatch(/FST_ERR|Client Error/);
      shapes.push(`${status} ${body.error!.code as string}`);
    }
    // A 5xx: the database is gone under a server.
    const broken = await buildServer({ ...api.t.ctx, pool: { query: () => Promise.reject(new Error('connection terminated')) } as never });
    const r500 = await broken.inject({ method: 'GET', url: '/v1/teammates', headers: { authorization: `Bearer ${api.key}` } });
    await broken.close();
    expect(r500.statusCode).toBe(500);
    expect(r500.json()).toEqual({ error: { type: 'api_error', code: 'internal_error', message: expect.any(String) } });
    shapes.push(`500 ${(r500.json() as { error: { code: string } }).error.code}`);
    console.log(`probe errors: ${shapes.join(', ')}; every body {error: {type, code, message}} expected ${cases.length + 1} observed ${shapes.length}`);
  });

  it('validation details are capped at 100, with a count of the rest', async () => {
    const signatureId = await insertSignature(api.t.ctx.pool, api.ws, { name: 'S', draftContent: '{"type":"stack","children":[]}' });
    const teammates = Array.from({ length: 10_000 }, (_, i) => ({ id: `not-a-teammate-${i}`, priority: 5000 }));
    const body = JSON.stringify({ assignments: { teammates } });
    const r = await api.raw('PUT', `/v1/signatures/${signatureId}/assignments`, body);
    const b = r.body as { details: unknown[]; details_omitted: number };
    console.log(
      `probe details: request ${(body.length / 1024).toFixed(0)} KB with 10000 invalid entries; response ${(r.text.length / 1024).toFixed(1)} KB, details expected 100 observed ${b.details.length}, details_omitted ${b.details_omitted}`,
    );
    expect(r.status).toBe(422);
    expect(b.details).toHaveLength(100);
    expect(b.details_omitted).toBe(9_900);
    expect(r.text.length).toBeLessThan(50_000);
  });

  it('the preview page removes U+202E and friends from its title and fact sheet, as the signature does', () => {
    const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'x', smartFieldUuid: fields.note }] }] };
    const evil = 'Ada \u202egnp.exe\u202c \u2066x\u2069';
    const rendered = renderSignature({
      tree: tree as never,
      values: { [fields.note]: evil },
      smartFieldKinds: { [fields.note]: 'text' },
      signatureId: 'probe',
    });
    expect(rendered.html).not.toMatch(/&#8238;|&#8236;|&#8294;|&#8297;/);
    const page = previewPage(
      rendered,
      [
        ['teammate', `${evil} <ada@acme.test>`],
        ['signature', `Standard ${evil}`],
      ],
      `Signature preview: ${evil}`,
    );
    for (const c of ['\u202e', '\u202c', '\u2066', '\u2069']) {
      expect(page).not.toContain(c);
      expect(page).not.toContain(`&#${c.codePointAt(0)};`);
    }
    expect(page).toContain('<title>Signature preview: Ada gnp.exe x</title>');
  });
});

describe('probe: rate limits per API key (default settings)', () => {
  const api = useApi();
  let signature: string;

  beforeAll(async () => {
    signature = await insertSignature(api.t.ctx.pool, api.ws, {
      name: 'S',
      draftContent: '{"type":"stack","children":[{"type":"text","tokens":[{"type":"textToken","value":"Hi"}]}]}',
    });
  });

  const statuses = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((a, r) => ({ ...a, [r.status]: (a[r.status] ?? 0) + 1 }), {});

  it('200 publishes in a burst: 60 accepted, 140 answered 429 with Retry-After and the error body; another key is not limited', async () => {
    const burst = await Promise.all(Array.from({ length: 200 }, () => fetchFull(api, 'POST', `/v1/signatures/${signature}/publish`)));
    const counts = statuses(burst);
    const limited = burst.find((r) => r.status === 429)!;
    console.log(
      `probe rate limits: 200 publishes in a burst: 200 expected 60 observed ${counts[200] ?? 0}, 429 expected 140 observed ${counts[429] ?? 0}; Retry-After ${limited?.retryAfter}`,
    );
    expect(counts).toEqual({ 200: 60, 429: 140 });
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({ error: { type: 'rate_limit_error', code: 'rate_limited', message: expect.stringMatching(/60 per minute/) } });
    const { key } = await createApiKey(api.t.ctx.pool, api.ws);
    expect((await fetchFull(api, 'POST', `/v1/signatures/${signature}/publish`, key)).status).toBe(200);
  });

  it('install (10 per minute), sync (20 per minute) and every other route (600 per minute) are limited too', async () => {
    const install = await Promise.all(Array.from({ length: 12 }, () => fetchFull(api, 'POST', `/v1/signatures/${signature}/install`)));
    const sync = await Promise.all(Array.from({ length: 22 }, () => fetchFull(api, 'POST', '/v1/integrations/sync')));
    const reads: { status: number }[] = [];
    for (let i = 0; i < 602; i += 50)
      reads.push(...(await Promise.all(Array.from({ length: Math.min(50, 602 - i) }, () => fetchFull(api, 'GET', '/v1/workspace')))));
    console.log(
      `probe rate limits: install 12 -> ${JSON.stringify(statuses(install))}, sync 22 -> ${JSON.stringify(statuses(sync))}, reads 602 -> ${JSON.stringify(statuses(reads))}`,
    );
    expect(statuses(install)).toEqual({ 202: 10, 429: 2 });
    expect(statuses(sync)[429]).toBe(2);
    expect(statuses(reads)).toEqual({ 200: 600, 429: 2 });
  });
});

async function fetchFull(
  api: { base: string; key: string },
  method: string,
  path: string,
  key = api.key,
): Promise<{ status: number; body: unknown; retryAfter: string | null }> {
  const r = await fetch(`${api.base}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null, retryAfter: r.headers.get('retry-after') };
}
