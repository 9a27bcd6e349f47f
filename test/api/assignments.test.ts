import { beforeAll, describe, expect, it } from 'vitest';
import { clearJobs, FOREIGN_UUID, jobsOf, seedGroup, seedIntegration, seedTeammate, tree, useApi } from './helpers.ts';

describe('signature assignments API', () => {
  const api = useApi();
  let signature: string;
  let foreignSignature: string;
  let ada: string;
  let bob: string;
  let cy: string;
  let sales: string;
  let emea: string;
  let foreignTeammate: string;

  beforeAll(async () => {
    const pool = api.t.ctx.pool;
    const dir = await seedIntegration(pool, api.ws);
    ada = (await seedTeammate(pool, api.ws, 'Ada')).id;
    bob = (await seedTeammate(pool, api.ws, 'Bob')).id;
    cy = (await seedTeammate(pool, api.ws, 'Cy')).id;
    sales = await seedGroup(pool, api.ws, dir, 'group', 'Sales', [bob]);
    emea = await seedGroup(pool, api.ws, dir, 'org_unit', 'EMEA', [cy]);
    signature = (await api.call('POST', '/v1/signatures', { signature: { name: 'Main', draft_content: tree() } })).body.data.id;
    foreignSignature = (await api.call('POST', '/v1/signatures', { signature: { name: 'Theirs', draft_content: tree() } }, api.otherKey)).body.data.id;
    foreignTeammate = (await seedTeammate(pool, api.otherWs, 'Stranger')).id;
  });

  it('GET /v1/signatures/{id}/assignments of a new signature is empty', async () => {
    const r = await api.call('GET', `/v1/signatures/${signature}/assignments`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: { signature_id: signature, teammates: [], groups: [], org_units: [] } });
  });

  it('PUT /v1/signatures/{id}/assignments replaces teammates, groups and org units with priorities', async () => {
    const r = await api.call('PUT', `/v1/signatures/${signature}/assignments`, {
      assignments: { teammates: [{ id: ada, priority: 5 }], groups: [{ id: sales }], org_units: [{ id: emea, priority: 10 }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      signature_id: signature,
      teammates: [{ id: ada, display_name: 'Ada', priority: 5 }],
      groups: [{ id: sales, name: 'Sales', priority: 0 }],
      org_units: [{ id: emea, name: 'EMEA', priority: 10 }],
    });
    const again = await api.call('PUT', `/v1/signatures/${signature}/assignments`, { assignments: { teammates: [{ id: bob, priority: 1 }] } });
    expect(again.body.data).toEqual({ signature_id: signature, teammates: [{ id: bob, display_name: 'Bob', priority: 1 }], groups: [], org_units: [] });
    expect((await api.call('GET', `/v1/signatures/${signature}/assignments`)).body).toEqual(again.body);
  });

  it('PUT on a published signature re-evaluates everyone who gains or loses it', async () => {
    const s = (await api.call('POST', '/v1/signatures', { signature: { name: 'Published', draft_content: tree() } })).body.data.id;
    await api.call('POST', `/v1/signatures/${s}/publish`);
    await api.call('PUT', `/v1/signatures/${s}/assignments`, { assignments: { teammates: [{ id: ada }] } });
    await clearJobs(api.t.ctx.pool);
    await api.call('PUT', `/v1/signatures/${s}/assignments`, { assignments: { groups: [{ id: sales }], org_units: [{ id: emea }] } });
    const jobs = await jobsOf(api.t.ctx.pool, 'fanout_teammates');
    expect(jobs).toHaveLength(1);
    expect([...jobs[0]!.payload.teammateIds].sort()).toEqual([ada, bob, cy].sort());
  });

  it('PUT with unknown, foreign, repeated or misfiled targets is 422 naming each entry', async () => {
    const r = await api.call('PUT', `/v1/signatures/${signature}/assignments`, {
      assignments: { teammates: [{ id: foreignTeammate }, { id: ada }, { id: ada }], groups: [{ id: emea }], org_units: [{ id: 'nope' }] },
    });
    expect(r.status).toBe(422);
    expect(r.body.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`)).toEqual([
      'assignments.teammates[0].id:not_found',
      'assignments.teammates[2].id:duplicate',
      'assignments.groups[0].id:not_found',
      'assignments.org_units[0].id:not_found',
    ]);
    const shape = await api.call('PUT', `/v1/signatures/${signature}/assignments`, { assignments: { teammates: [{ id: ada, priority: 1.5, weight: 1 }] } });
    expect(shape.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['assignments.teammates[0].priority', 'assignments.teammates[0].weight']);
  });

  it('GET and PUT on another workspace signature, or a malformed id, are 404', async () => {
    expect((await api.call('GET', `/v1/signatures/${foreignSignature}/assignments`)).status).toBe(404);
    expect((await api.call('PUT', `/v1/signatures/${foreignSignature}/assignments`, { assignments: {} })).status).toBe(404);
    expect((await api.call('GET', '/v1/signatures/bad/assignments')).status).toBe(404);
  });

  it.each([
    ['GET', `/v1/signatures/${FOREIGN_UUID}/assignments`],
    ['PUT', `/v1/signatures/${FOREIGN_UUID}/assignments`],
  ])('%s %s without a key is 401', async (method, path) => {
    const r = await api.call(method, path, method === 'PUT' ? { assignments: {} } : undefined, null);
    expect(r.status).toBe(401);
  });
});
