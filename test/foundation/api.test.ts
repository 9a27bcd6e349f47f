import { describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { createApiKey, verifyApiKey } from '../../src/db/apiKeys.ts';
import { useTestContext, createDatabase, openTestContext } from '../helpers/db.ts';
import { useServerWithKey } from '../helpers/server.ts';

describe('HTTP server', () => {
  const t = useTestContext();
  const api = useServerWithKey(t);

  it('/healthz answers while the process is up', async () => {
    const r = await api.server.inject('/healthz');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is 200 on a reachable, migrated database', async () => {
    const r = await api.server.inject('/readyz');
    expect(r.statusCode).toBe(200);
  });

  it('/readyz is 503 when migrations are pending', async () => {
    const empty = await createDatabase({ empty: true });
    const ctx = await openTestContext(empty.url);
    await ctx.pool.query('create table schema_migrations (id serial, name text, run_on timestamptz)');
    const s = await buildServer(ctx);
    const r = await s.inject('/readyz');
    expect(r.statusCode).toBe(503);
    expect(r.json().reason).toMatch(/migrations pending/);
    await s.close();
    await ctx.close();
    await empty.drop();
  });

  it('/metrics serves Prometheus text with process and job metrics', async () => {
    const r = await api.server.inject('/metrics');
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('process_cpu_user_seconds_total');
    expect(r.body).toContain('sigsync_jobs_total');
  });

  it('a missing key gets 401 with the spec error object', async () => {
    const r = await api.server.inject('/v1/workspace');
    expect(r.statusCode).toBe(401);
    expect(r.json()).toEqual({ error: { type: 'authentication_error', code: 'unauthorized', message: expect.any(String) } });
  });

  it('a wrong key gets 401', async () => {
    const wrong = api.key.slice(0, -4) + (api.key.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const r = await api.server.inject({ url: '/v1/workspace', headers: { authorization: `Bearer ${wrong}` } });
    expect(r.statusCode).toBe(401);
  });

  it('a malformed Authorization header gets 401', async () => {
    const r = await api.server.inject({ url: '/v1/workspace', headers: { authorization: `Basic ${api.key}` } });
    expect(r.statusCode).toBe(401);
  });

  it('a valid key gets 200 scoped to its workspace', async () => {
    const r = await api.server.inject({ url: '/v1/workspace', headers: { authorization: `Bearer ${api.key}` } });
    expect(r.statusCode).toBe(200);
    expect(r.json().data).toMatchObject({ id: api.workspaceId, name: 'Acme', seat_count: 0, plan: { tier: 'free', kind: 'free_trial' } });
  });

  it('a revoked key gets 401', async () => {
    const k = await createApiKey(t.ctx.pool, api.workspaceId, 'temp');
    await t.ctx.pool.query('update api_keys set revoked_at = now() where id = $1', [k.id]);
    const r = await api.server.inject({ url: '/v1/workspace', headers: { authorization: `Bearer ${k.key}` } });
    expect(r.statusCode).toBe(401);
  });

  it('stores API keys hashed, keeping only a short prefix in clear', async () => {
    const { rows } = await t.ctx.pool.query('select prefix, key_hash from api_keys');
    for (const row of rows) {
      expect(row.prefix).toHaveLength(12);
      expect(row.key_hash.toString('latin1')).not.toContain(api.key.slice(12));
    }
    expect(await verifyApiKey(t.ctx.pool, api.key)).toMatchObject({ workspaceId: api.workspaceId });
  });

  it('unknown routes get a 404 error object', async () => {
    const r = await api.server.inject({ url: '/nope' });
    expect(r.statusCode).toBe(404);
    expect(r.json().error.type).toBe('not_found_error');
  });
});
