/**
 * The audit trail: API writes that change content, assignments, installs or keys, and console
 * actions, each with actor, action, target and time, scoped to its workspace, read through
 * GET /v1/audit_entries (paged like every list) and documented in the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { redeemSignInLink } from '../../src/console/sessions.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { visitorOf } from '../helpers/tracking.ts';
import { seedIntegration, seedTeammate, tree, useApi } from './helpers.ts';

/** A 1×1 PNG, for an asset upload. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/**
 * The v1 write operations that are not audited, each with why: recording an analytics event is
 * measurement sent by signatures' readers' clicks (volume, no content, assignment, install or key).
 */
const NOT_AUDITED: Record<string, string> = { 'post /v1/analytics/events': 'measurement, not a change' };

type Ids = Record<string, string>;
/** How to make each audited write succeed: the request, and the action and target its entry must have. */
type Step = (ids: Ids) => { path: string; body?: unknown; status: number; action: string; target: [kind: string, id: string] };

interface Entry {
  id: string;
  at: string;
  actor: { kind: string; name: string; id: string | null };
  action: string;
  target: { kind: string; id: string };
}

describe('audit trail', () => {
  const server: { it?: FastifyInstance } = {};
  const api = useApi({}, { routes: [async (s) => void (server.it = s)] });
  /** The write routes the server registers under /v1 (fastify's route tree), as `method /v1/path/{param}`. */
  const registeredWrites = () =>
    ['POST', 'PUT', 'PATCH', 'DELETE'].flatMap((m) =>
      server
        .it!.printRoutes({ commonPrefix: false, method: m })
        .split('\n')
        .map((line) => new RegExp(`(/v1/\\S*) \\(${m}\\)`).exec(line)?.[1])
        .filter((p): p is string => p !== undefined)
        .map((p) => `${m.toLowerCase()} ${p.replace(/:(\w+)/g, '{$1}')}`),
    );

  it('records each content, assignment and install write with the API key as actor, newest first, paged; another workspace sees none', async () => {
    const created = await api.call('POST', '/v1/signatures', { signature: { name: 'Standard', draft_content: tree('Hi') } });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    expect((await api.call('PATCH', `/v1/signatures/${id}`, { signature: { draft_content: tree('Hello') } })).status).toBe(200);
    expect((await api.call('POST', `/v1/signatures/${id}/publish`)).status).toBe(200);
    expect((await api.call('PUT', `/v1/signatures/${id}/assignments`, { assignments: { teammates: [] } })).status).toBe(200);
    expect((await api.call('POST', `/v1/signatures/${id}/install`)).status).toBe(202);
    // A refused write records nothing.
    expect((await api.call('PATCH', `/v1/signatures/${id}`, { signature: { name: '\u001b[31m' } })).status).toBe(422);

    const page1 = await api.call('GET', '/v1/audit_entries?per_page=2');
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total_count: 5, total_pages: 3, has_more: true });
    const all = (await api.call('GET', '/v1/audit_entries')).body.data as Entry[];
    expect(all.map((e) => e.action)).toEqual(['signature.install', 'assignments.replace', 'signature.publish', 'signature.update', 'signature.create']);
    expect(page1.body.data.map((e: Entry) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    const keyId = (await api.t.ctx.pool.query<{ id: string; prefix: string }>('select id, prefix from api_keys where workspace_id = $1', [api.ws])).rows[0]!;
    for (const e of all) {
      expect(e.actor).toEqual({ kind: 'api_key', name: `default (${keyId.prefix})`, id: keyId.id });
      expect(e.target).toEqual({ kind: 'signature', id });
      expect(Date.now() - Date.parse(e.at)).toBeLessThan(60_000);
    }
    expect((await api.call('GET', '/v1/audit_entries', undefined, api.otherKey)).body.data).toEqual([]);
    expect((await api.call('GET', '/v1/audit_entries', undefined, null)).status).toBe(401);
    expect((await api.call('GET', '/v1/audit_entries?per_page=101')).body.details[0].field).toBe('per_page');
  });

  it('is in the OpenAPI document as an extension', async () => {
    const doc = (await api.call('GET', '/v1/openapi.json', undefined, null)).body;
    expect(doc.paths['/v1/audit_entries'].get.summary).toContain('extension');
  });

  it('console link --as names the person; the session, its sign-in and an API key made by the CLI are recorded', async () => {
    const env = { DATABASE_URL: api.t.url, ENCRYPTION_KEY: TEST_KEY, PUBLIC_BASE_URL: 'https://sig.example.test' };
    const r = await runCli(['console', 'link', '--workspace', api.otherWs, '--as', 'alice@acme.example'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('For alice@acme.example.');
    const token = /token=(sgl_[A-Za-z0-9]{43})/.exec(r.stdout)![1]!;
    const session = (await redeemSignInLink(api.t.ctx.pool, token))!;
    expect(session.subject).toBe('alice@acme.example');
    // Today's form still works: the link is for whoever ran the command.
    const plain = await runCli(['console', 'link', '--workspace', api.otherWs], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/For cli:\S+\./);
    const bad = await runCli(['console', 'link', '--workspace', api.otherWs, '--as', 'alice\u202e@acme.example'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--as: an email address');

    const key = await runCli(['apikey', 'create', '--workspace', api.otherWs, '--name', 'deploy'], env);
    expect(key.code, key.stderr).toBe(0);
    const entries = (await api.call('GET', '/v1/audit_entries', undefined, api.otherKey)).body.data as Entry[];
    expect(entries.map((e) => [e.action, e.actor.kind, e.actor.name.replace(/^cli:\S+$/, 'cli:USER'), e.target.kind])).toEqual([
      ['api_key.create', 'cli', 'cli:USER', 'api_key'],
      ['console.sign_in', 'console', 'alice@acme.example', 'console_session'],
    ]);
    expect(entries[0]!.target.id).toMatch(/^deploy \(sgs_/);
    expect(entries[1]!.actor.id).toBe(session.id);
  });

  it('every v1 write operation of the OpenAPI document records an entry with actor, action, target and time', async () => {
    const pool = api.t.ctx.pool;
    const soon = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
    const teammate = await seedTeammate(pool, api.ws, 'Ada', [
      { address: 'ada@acme.test', primary: true },
      { address: 'ada.l@acme.test', primary: false },
    ]);
    const leaving = await seedTeammate(pool, api.ws, 'Bob');
    await seedIntegration(pool, api.ws, { category: 'teammates', name: 'Directory' });
    await seedIntegration(pool, api.ws, { category: 'signatures', name: 'Gmail' });
    const ids: Ids = { teammate: teammate.id, email: teammate.emailIds[1]!, leaving: leaving.id, ws: api.ws, visitor: await visitorOf(api, 'walker') };
    const steps: Record<string, Step> = {
      'post /v1/signatures': () => ({
        path: '/v1/signatures',
        body: {
          signature: {
            name: 'Walk',
            draft_content: tree(),
            variants: [
              { kind: 'reply', draft_content: tree('Re') },
              { kind: 'internal', draft_content: tree('In') },
            ],
          },
        },
        status: 201,
        action: 'signature.create',
        target: ['signature', '$created'],
      }),
      'patch /v1/signatures/{id}': (i) => ({
        path: `/v1/signatures/${i.signature}`,
        body: { signature: { name: 'Walked' } },
        status: 200,
        action: 'signature.update',
        target: ['signature', i.signature!],
      }),
      'post /v1/signatures/{id}/publish': (i) => ({
        path: `/v1/signatures/${i.signature}/publish`,
        status: 200,
        action: 'signature.publish',
        target: ['signature', i.signature!],
      }),
      'post /v1/signatures/{id}/install': (i) => ({
        path: `/v1/signatures/${i.signature}/install`,
        status: 202,
        action: 'signature.install',
        target: ['signature', i.signature!],
      }),
      'post /v1/signatures/{signature_id}/variants/{kind}/publish': (i) => ({
        path: `/v1/signatures/${i.signature}/variants/reply/publish`,
        status: 200,
        action: 'signature.variant.publish',
        target: ['signature', i.signature!],
      }),
      'put /v1/signatures/{id}/assignments': (i) => ({
        path: `/v1/signatures/${i.signature}/assignments`,
        body: { assignments: { teammates: [] } },
        status: 200,
        action: 'assignments.replace',
        target: ['signature', i.signature!],
      }),
      'post /v1/folders': () => ({
        path: '/v1/folders',
        body: { folder: { name: 'Sales' } },
        status: 201,
        action: 'folder.create',
        target: ['folder', '$created'],
      }),
      'patch /v1/folders/{id}': (i) => ({
        path: `/v1/folders/${i.folder}`,
        body: { folder: { name: 'Sales EU' } },
        status: 200,
        action: 'folder.rename',
        target: ['folder', i.folder!],
      }),
      'delete /v1/folders/{id}': (i) => ({ path: `/v1/folders/${i.folder}`, status: 204, action: 'folder.delete', target: ['folder', i.folder!] }),
      'post /v1/smart_fields': () => ({
        path: '/v1/smart_fields',
        body: { smart_field: { label: 'Job title' } },
        status: 201,
        action: 'smart_field.create',
        target: ['smart_field', '$created'],
      }),
      'patch /v1/smart_fields/{id}': (i) => ({
        path: `/v1/smart_fields/${i.smart_field}`,
        body: { smart_field: { label: 'Title' } },
        status: 200,
        action: 'smart_field.update',
        target: ['smart_field', i.smart_field!],
      }),
      'patch /v1/teammates/{id}': (i) => ({
        path: `/v1/teammates/${i.teammate}`,
        body: { teammate: { smart_fields: [{ smart_field_id: i.smart_field, value: 'Admiral' }] } },
        status: 200,
        action: 'teammate.update',
        target: ['teammate', i.teammate!],
      }),
      'delete /v1/emails/{id}': (i) => ({ path: `/v1/emails/${i.email}`, status: 204, action: 'email.delete', target: ['email', i.email!] }),
      'delete /v1/teammates/{id}': (i) => ({ path: `/v1/teammates/${i.leaving}`, status: 204, action: 'teammate.delete', target: ['teammate', i.leaving!] }),
      'post /v1/assets': () => ({
        path: '/v1/assets',
        body: { asset: { file_base64: PNG.toString('base64'), filename: 'logo.png' } },
        status: 201,
        action: 'asset.create',
        target: ['asset', '$created'],
      }),
      'patch /v1/assets/{id}': (i) => ({
        path: `/v1/assets/${i.asset}`,
        body: { asset: { name: 'Logo' } },
        status: 200,
        action: 'asset.rename',
        target: ['asset', i.asset!],
      }),
      'delete /v1/assets/{id}': (i) => ({ path: `/v1/assets/${i.asset}`, status: 204, action: 'asset.delete', target: ['asset', i.asset!] }),
      'post /v1/marketing_campaigns': (i) => ({
        path: '/v1/marketing_campaigns',
        body: {
          marketing_campaign: { name: 'Spring', content: tree('Banner'), signature_template_ids: [i.signature], start_time: soon(-1), end_time: soon(60) },
        },
        status: 201,
        action: 'campaign.create',
        target: ['marketing_campaign', '$created'],
      }),
      'patch /v1/marketing_campaigns/{id}': (i) => ({
        path: `/v1/marketing_campaigns/${i.marketing_campaign}`,
        body: { marketing_campaign: { name: 'Spring sale' } },
        status: 200,
        action: 'campaign.update',
        target: ['marketing_campaign', i.marketing_campaign!],
      }),
      'post /v1/marketing_campaigns/{id}/schedule': (i) => ({
        path: `/v1/marketing_campaigns/${i.marketing_campaign}/schedule`,
        status: 200,
        action: 'campaign.schedule',
        target: ['marketing_campaign', i.marketing_campaign!],
      }),
      'post /v1/marketing_campaigns/{id}/pause': (i) => ({
        path: `/v1/marketing_campaigns/${i.marketing_campaign}/pause`,
        status: 200,
        action: 'campaign.pause',
        target: ['marketing_campaign', i.marketing_campaign!],
      }),
      'post /v1/marketing_campaigns/{id}/resume': (i) => ({
        path: `/v1/marketing_campaigns/${i.marketing_campaign}/resume`,
        status: 200,
        action: 'campaign.resume',
        target: ['marketing_campaign', i.marketing_campaign!],
      }),
      'post /v1/marketing_campaigns/{id}/experiments': (i) => ({
        path: `/v1/marketing_campaigns/${i.marketing_campaign}/experiments`,
        body: {
          experiment: {
            name: 'Banners',
            mode: 'ab',
            arms: [
              { name: 'A', content: tree('A') },
              { name: 'B', content: tree('B') },
            ],
          },
        },
        status: 201,
        action: 'experiment.create',
        target: ['experiment', '$created'],
      }),
      'post /v1/experiments/{id}/start': (i) => ({
        path: `/v1/experiments/${i.experiment}/start`,
        status: 200,
        action: 'experiment.start',
        target: ['experiment', i.experiment!],
      }),
      'post /v1/experiments/{id}/stop': (i) => ({
        path: `/v1/experiments/${i.experiment}/stop`,
        status: 200,
        action: 'experiment.stop',
        target: ['experiment', i.experiment!],
      }),
      'post /v1/experiments/{id}/promote': (i) => ({
        path: `/v1/experiments/${i.experiment}/promote`,
        body: { arm_id: i.arm },
        status: 200,
        action: 'experiment.promote',
        target: ['experiment', i.experiment!],
      }),
      'patch /v1/workspace/analytics_settings': (i) => ({
        path: '/v1/workspace/analytics_settings',
        body: { analytics_settings: { attribution_window_days: 7 } },
        status: 200,
        action: 'analytics_settings.update',
        target: ['workspace', i.ws!],
      }),
      'patch /v1/workspace/privacy_settings': (i) => ({
        path: '/v1/workspace/privacy_settings',
        body: { privacy_settings: { views_tracking: 'per_person' } },
        status: 200,
        action: 'privacy_settings.update',
        target: ['workspace', i.ws!],
      }),
      'delete /v1/analytics/visitors/{visitor_id}': (i) => ({
        path: `/v1/analytics/visitors/${i.visitor}`,
        status: 204,
        action: 'visitor.erase',
        target: ['visitor', i.visitor!],
      }),
      'post /v1/integrations/sync': (i) => ({ path: '/v1/integrations/sync', status: 200, action: 'integrations.sync', target: ['workspace', i.ws!] }),
    };

    const doc = (await api.call('GET', '/v1/openapi.json', undefined, null)).body as { paths: Record<string, Record<string, unknown>> };
    const writes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m} ${path}`),
    );
    // A write operation added to the API without an entry here (or a reason in NOT_AUDITED) fails;
    // so does a /v1 write route the document does not show.
    expect(registeredWrites().length).toBeGreaterThan(20);
    expect(registeredWrites().filter((w) => !writes.includes(w))).toEqual([]);
    expect(writes.filter((w) => !(w in steps) && !(w in NOT_AUDITED))).toEqual([]);
    expect(Object.keys(steps).filter((w) => !writes.includes(w))).toEqual([]);

    const keyId = (await pool.query<{ id: string; prefix: string }>('select id, prefix from api_keys where workspace_id = $1', [api.ws])).rows[0]!;
    const count = async () => (await pool.query<{ n: number }>('select count(*)::int as n from audit_entries where workspace_id = $1', [api.ws])).rows[0]!.n;
    for (const [op, step] of Object.entries(steps)) {
      const s = step(ids);
      const before = await count();
      const r = await api.call(op.split(' ')[0]!.toUpperCase(), s.path, s.body);
      expect(r.status, `${op}: ${r.text}`).toBe(s.status);
      const kind = s.target[0];
      if (s.target[1] === '$created') ids[kind] = r.body.data.id;
      if (kind === 'experiment' && s.target[1] === '$created') ids.arm = r.body.data.arms[1].id;
      expect(await count(), op).toBe(before + 1);
      const entry = ((await api.call('GET', '/v1/audit_entries?per_page=1')).body.data as Entry[])[0]!;
      expect({ op, action: entry.action, target: entry.target, actor: entry.actor }).toEqual({
        op,
        action: s.action,
        target: { kind, id: s.target[1] === '$created' ? ids[kind] : s.target[1] },
        actor: { kind: 'api_key', name: `default (${keyId.prefix})`, id: keyId.id },
      });
      expect(Math.abs(Date.now() - Date.parse(entry.at)), op).toBeLessThan(60_000);
    }
  });
});
