/** GET /v1/groups: an extension of the spec, read-only, paged, scoped to the key's workspace. */
import { describe, expect, it } from 'vitest';
import { seedGroup, seedIntegration, seedTeammate, useApi } from './helpers.ts';

describe('GET /v1/groups', () => {
  const api = useApi();

  it('lists the workspace groups and org units with their ids, paged, and none of another workspace', async () => {
    const pool = api.t.ctx.pool;
    const dir = await seedIntegration(pool, api.ws, { name: 'Directory' });
    const ada = await seedTeammate(pool, api.ws, 'Ada');
    const sales = await seedGroup(pool, api.ws, dir, 'group', 'Sales', [ada.id]);
    const emea = await seedGroup(pool, api.ws, dir, 'org_unit', 'EMEA');
    const foreign = await seedGroup(pool, api.otherWs, await seedIntegration(pool, api.otherWs), 'group', 'Foreign');

    const all = await api.call('GET', '/v1/groups');
    expect(all.status).toBe(200);
    expect(all.body.pagination).toMatchObject({ total_count: 2 });
    const byId = Object.fromEntries(all.body.data.map((g: { id: string }) => [g.id, g]));
    expect(byId[sales]).toMatchObject({ kind: 'group', name: 'Sales', integration_id: dir, member_count: 1 });
    expect(byId[emea]).toMatchObject({ kind: 'org_unit', name: 'EMEA', member_count: 0 });
    expect(byId[foreign]).toBeUndefined();

    const units = await api.call('GET', '/v1/groups?kind=org_unit');
    expect(units.body.data.map((g: { id: string }) => g.id)).toEqual([emea]);
    const page = await api.call('GET', '/v1/groups?per_page=1&page=2');
    expect(page.status).toBe(200);
    expect(page.body.data).toHaveLength(1);
    expect(page.body.pagination).toMatchObject({ total_count: 2, page: 2, limit: 1, total_pages: 2 });
    expect((await api.call('GET', '/v1/groups?kind=team')).status).toBe(422);
    expect((await api.call('GET', '/v1/groups', undefined, null)).status).toBe(401);
    expect((await api.call('POST', '/v1/groups', { group: { name: 'x' } })).status).toBe(404);
  });
});
