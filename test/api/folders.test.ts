import { beforeAll, describe, expect, it } from 'vitest';
import { FOREIGN_UUID, tree, useApi } from './helpers.ts';

describe('folders API', () => {
  const api = useApi();
  let foreignFolder: string;

  beforeAll(async () => {
    foreignFolder = (await api.call('POST', '/v1/folders', { folder: { name: 'Theirs' } }, api.otherKey)).body.data.id;
  });

  it('POST /v1/folders creates a folder: 201 {data: folder} with signature_count 0', async () => {
    const r = await api.call('POST', '/v1/folders', { folder: { name: 'Sales' } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      data: { id: expect.any(String), name: 'Sales', signature_count: 0, created_at: expect.stringMatching(/Z$/), updated_at: expect.stringMatching(/Z$/) },
    });
  });

  it('POST /v1/folders with a taken name, an empty name, an unknown field or no wrapper is 422 with the field', async () => {
    await api.call('POST', '/v1/folders', { folder: { name: 'Taken' } });
    const taken = await api.call('POST', '/v1/folders', { folder: { name: 'Taken' } });
    expect(taken.status).toBe(422);
    expect(taken.body.details).toEqual([expect.objectContaining({ field: 'folder.name', code: 'already_exists' })]);
    const empty = await api.call('POST', '/v1/folders', { folder: { name: '  ', color: 'red' } });
    expect(empty.body.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
      'folder.color:unknown_field',
      'folder.name:too_small',
    ]);
    const bare = await api.call('POST', '/v1/folders', { name: 'x' });
    expect(bare.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['folder', 'name']);
    const nobody = await api.call('POST', '/v1/folders');
    expect(nobody.status).toBe(422);
    expect(nobody.body.details[0]).toMatchObject({ field: 'body' });
  });

  it('signature_count counts the signatures in the folder', async () => {
    const f = (await api.call('POST', '/v1/folders', { folder: { name: 'Counted' } })).body.data;
    for (const name of ['A', 'B']) await api.call('POST', '/v1/signatures', { signature: { name, draft_content: tree(), folder_uuid: f.id } });
    const list = await api.call('GET', '/v1/folders?per_page=100');
    expect(list.body.data.find((x: { id: string }) => x.id === f.id).signature_count).toBe(2);
  });

  it('PATCH /v1/folders/{id} renames; a taken name is 422; another workspace or a malformed id is 404', async () => {
    const f = (await api.call('POST', '/v1/folders', { folder: { name: 'Old name' } })).body.data;
    const r = await api.call('PATCH', `/v1/folders/${f.id}`, { folder: { name: 'New name' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: f.id, name: 'New name' });
    const clash = await api.call('PATCH', `/v1/folders/${f.id}`, { folder: { name: 'Sales' } });
    expect(clash.body.details[0]).toMatchObject({ field: 'folder.name', code: 'already_exists' });
    expect((await api.call('PATCH', `/v1/folders/${foreignFolder}`, { folder: { name: 'Mine' } })).status).toBe(404);
    expect((await api.call('PATCH', '/v1/folders/1', { folder: { name: 'Mine' } })).status).toBe(404);
    const bad = await api.call('PATCH', `/v1/folders/${f.id}`, { folder: { name: 7 } });
    expect(bad.body.details[0]).toMatchObject({ field: 'folder.name', code: 'invalid_type' });
  });

  it('DELETE /v1/folders/{id} answers 204 and leaves its signatures outside any folder', async () => {
    const f = (await api.call('POST', '/v1/folders', { folder: { name: 'Doomed' } })).body.data;
    const s = (await api.call('POST', '/v1/signatures', { signature: { name: 'Kept', draft_content: tree(), folder_uuid: f.id } })).body.data;
    const r = await api.call('DELETE', `/v1/folders/${f.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    const { rows } = await api.t.ctx.pool.query('select folder_id from signatures where id = $1', [s.id]);
    expect(rows[0].folder_id).toBeNull();
    expect((await api.call('DELETE', `/v1/folders/${f.id}`)).status).toBe(404);
  });

  it('DELETE /v1/folders/{id} of another workspace is 404 and deletes nothing', async () => {
    expect((await api.call('DELETE', `/v1/folders/${foreignFolder}`)).status).toBe(404);
    expect((await api.t.ctx.pool.query('select 1 from folders where id = $1', [foreignFolder])).rowCount).toBe(1);
  });

  it('GET /v1/folders pages newest first across pages, caller workspace only', async () => {
    for (let i = 0; i < 5; i++) await api.call('POST', '/v1/folders', { folder: { name: `Page ${i}` } });
    const total = (await api.t.ctx.pool.query('select count(*)::int as n from folders where workspace_id = $1', [api.ws])).rows[0].n;
    const p1 = await api.call('GET', '/v1/folders?per_page=2');
    expect(p1.body.pagination).toEqual({ page: 1, limit: 2, total_count: total, total_pages: Math.ceil(total / 2), has_more: true });
    expect(p1.body.data.map((f: { name: string }) => f.name)).toEqual(['Page 4', 'Page 3']);
    const names: string[] = [];
    for (let page = 1; page <= Math.ceil(total / 2); page++)
      names.push(...(await api.call('GET', `/v1/folders?per_page=2&page=${page}`)).body.data.map((f: { name: string }) => f.name));
    expect(names).toHaveLength(total);
    expect(names).not.toContain('Theirs');
  });

  it.each([
    ['GET', '/v1/folders'],
    ['POST', '/v1/folders'],
    ['PATCH', `/v1/folders/${FOREIGN_UUID}`],
    ['DELETE', `/v1/folders/${FOREIGN_UUID}`],
  ])('%s %s without a key is 401', async (method, path) => {
    const r = await api.call(method, path, method === 'POST' || method === 'PATCH' ? {} : undefined, null);
    expect(r.status).toBe(401);
  });
});
