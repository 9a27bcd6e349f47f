/**
 * The audit trail: API writes that change content, assignments, installs or keys, and console
 * actions, each with actor, action, target and time, scoped to its workspace, read through
 * GET /v1/audit_entries (paged like every list) and documented in the OpenAPI document.
 */
import { describe, expect, it } from 'vitest';
import { redeemSignInLink } from '../../src/console/sessions.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { tree, useApi } from './helpers.ts';

interface Entry {
  id: string;
  at: string;
  actor: { kind: string; name: string; id: string | null };
  action: string;
  target: { kind: string; id: string };
}

describe('audit trail', () => {
  const api = useApi();

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
});
