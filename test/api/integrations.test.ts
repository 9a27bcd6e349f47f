/** GET /v1/integrations and POST /v1/integrations/sync over HTTP. */
import { describe, expect, it } from 'vitest';
import { useApi, seedIntegration, clearJobs, jobsOf } from './helpers.ts';

describe('integrations API', () => {
  // 50 concurrent sync calls on one key: over the default RATE_LIMIT_SYNC (test/reliability/probe.test.ts covers the limits).
  const api = useApi({ RATE_LIMIT_SYNC: '0' });
  const pool = () => api.t.ctx.pool;

  it('POST /v1/integrations/sync without a directory integration answers with the connect remediation', async () => {
    const r = await api.call('POST', '/v1/integrations/sync');
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: { type: 'invalid_request_error', code: 'no_directory_integration', message: expect.any(String) },
      remediation: { action: 'connect_integration', dashboard_url: expect.stringMatching(/\/console\/integrations$/), message: expect.any(String) },
    });
  });

  it('starts one run per active directory integration and leaves out lost ones and signature ones', async () => {
    await clearJobs(pool());
    const dir = await seedIntegration(pool(), api.ws, { name: 'Directory' });
    const values = await seedIntegration(pool(), api.ws, { category: 'smart_fields', name: 'Values' });
    await seedIntegration(pool(), api.ws, { category: 'signatures', name: 'Gmail' });
    await seedIntegration(pool(), api.ws, { status: 'access_lost', name: 'Lost' });
    const r = await api.call('POST', '/v1/integrations/sync');
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(2);
    const names = r.body.data.map((x: { integration_name: string }) => x.integration_name).sort();
    expect(names).toEqual(['Directory', 'Values']);
    for (const run of r.body.data) {
      expect(run).toEqual({
        id: expect.any(String),
        integration_id: expect.any(String),
        integration_name: expect.any(String),
        category: expect.stringMatching(/^(teammates|smart_fields)$/),
        status: 'running',
        started_at: expect.any(String),
      });
    }
    expect(r.body.data.map((x: { integration_id: string }) => x.integration_id).sort()).toEqual([dir, values].sort());
    expect(await jobsOf(pool(), 'sync_integration')).toHaveLength(2);
  });

  it('a sync already running answers 409 with a remediation, and 50 concurrent calls never start a second run', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => api.call('POST', '/v1/integrations/sync')));
    expect(results.every((r) => r.status === 409)).toBe(true);
    expect(results[0]!.body).toMatchObject({ error: { type: 'conflict_error', code: 'sync_already_running' }, remediation: { action: 'wait_for_sync' } });
    const running = await pool().query(`select integration_id, count(*)::int as n from sync_runs where workspace_id = $1 and status = 'running' group by 1`, [
      api.ws,
    ]);
    expect(running.rows.every((r) => r.n === 1)).toBe(true);
  });

  it('only lost integrations left: the reconnect remediation', async () => {
    await pool().query(`update sync_runs set status = 'succeeded', finished_at = now() where workspace_id = $1`, [api.ws]);
    await pool().query(`update integrations set status = 'access_lost', error_since = now() where workspace_id = $1`, [api.ws]);
    const r = await api.call('POST', '/v1/integrations/sync');
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ error: { code: 'integration_access_lost' }, remediation: { action: 'reconnect_integration' } });
    await pool().query(`update integrations set status = 'active', error_since = null where workspace_id = $1`, [api.ws]);
  });

  it('GET /v1/integrations pages newest first with the spec fields and hides other workspaces', async () => {
    await seedIntegration(pool(), api.otherWs, { name: 'Foreign' });
    const p1 = await api.call('GET', '/v1/integrations?per_page=3');
    expect(p1.status).toBe(200);
    expect(p1.body.pagination).toEqual({ page: 1, limit: 3, total_count: 4, total_pages: 2, has_more: true });
    expect(Object.keys(p1.body.data[0]).sort()).toEqual([
      'category',
      'created_at',
      'dashboard_url',
      'error_message',
      'error_since',
      'id',
      'kind',
      'name',
      'status',
      'updated_at',
    ]);
    expect(p1.body.data[0].name).toBe('Lost');
    const p2 = await api.call('GET', '/v1/integrations?per_page=3&page=2');
    expect(p2.body.data).toHaveLength(1);
    expect(p2.body.pagination.has_more).toBe(false);
    const all = [...p1.body.data, ...p2.body.data].map((i: { name: string }) => i.name);
    expect(all).not.toContain('Foreign');
    expect(all).not.toContain(undefined);
  });

  it('rejects a bad per_page with the field path', async () => {
    const r = await api.call('GET', '/v1/integrations?per_page=1000');
    expect(r.status).toBe(422);
    expect(r.body.details[0]).toMatchObject({ field: 'per_page' });
  });

  it('GET /v1/integrations/sync/{id} reads a run with its counters; another workspace gets 404', async () => {
    const run = (await pool().query<{ id: string }>(`select id from sync_runs where workspace_id = $1 limit 1`, [api.ws])).rows[0]!.id;
    const r = await api.call('GET', `/v1/integrations/sync/${run}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: run, status: 'succeeded', mode: 'full', counters: { pages: 0, seen: 0, created: 0 }, error: null });
    expect((await api.call('GET', `/v1/integrations/sync/${run}`, undefined, api.otherKey)).status).toBe(404);
    expect((await api.call('GET', '/v1/integrations/sync/not-an-id')).status).toBe(404);
  });

  it('answers 401 without a key', async () => {
    expect((await api.call('GET', '/v1/integrations', undefined, null)).status).toBe(401);
    expect((await api.call('POST', '/v1/integrations/sync', undefined, null)).status).toBe(401);
  });
});
