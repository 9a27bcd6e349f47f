import { beforeAll, describe, expect, it } from 'vitest';
import { FOREIGN_UUID, seedIntegration, tree, useApi } from './helpers.ts';

describe('smart fields API', () => {
  const api = useApi();
  let directory: string;
  let foreignField: string;

  beforeAll(async () => {
    directory = await seedIntegration(api.t.ctx.pool, api.ws, { category: 'teammates' });
    foreignField = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Theirs' } }, api.otherKey)).body.data.id;
  });

  it('POST /v1/smart_fields creates a field with a derived slug, next position and the spec shape', async () => {
    const a = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Job Title', required: true } });
    expect(a.status).toBe(201);
    expect(a.body.data).toEqual({
      id: expect.any(String),
      label: 'Job Title',
      slug: 'job_title',
      kind: 'text',
      required: true,
      default: false,
      position: 0,
      integration_id: null,
      integration_attribute: null,
      used_in_signatures: false,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const b = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Job title!' } });
    expect(b.body.data).toMatchObject({ slug: 'job_title_2', position: 1 });
  });

  it('POST /v1/smart_fields with a taken slug, bad kind or unknown field is 422 on each field', async () => {
    await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Phone', slug: 'phone' } });
    const r = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Phone 2', slug: 'phone' } });
    expect(r.status).toBe(422);
    expect(r.body.details).toEqual([expect.objectContaining({ field: 'smart_field.slug', code: 'already_exists' })]);
    const r2 = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'x', kind: 'colour', colour: 1 } });
    const fields = r2.body.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort();
    expect(fields).toEqual(['smart_field.colour:unknown_field', 'smart_field.kind:invalid_value']);
    expect(r2.body.details.find((d: { field: string }) => d.field === 'smart_field.kind').allowed).toEqual(['text', 'email', 'phone', 'url', 'image']);
  });

  it('POST /v1/smart_fields linked to a directory integration is locked to it; the link needs an attribute', async () => {
    const r = await api.call('POST', '/v1/smart_fields', {
      smart_field: { label: 'Department', integration_id: directory, integration_attribute: 'organizations.primary.department' },
    });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ integration_id: directory, integration_attribute: 'organizations.primary.department' });
    const r2 = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Cost center', integration_id: directory } });
    expect(r2.status).toBe(422);
    expect(r2.body.details).toEqual([
      expect.objectContaining({ field: 'smart_field.integration_attribute', code: 'required', missing: ['integration_attribute'] }),
    ]);
  });

  it('PATCH /v1/smart_fields/{id} updates label and required, links and unlinks an integration', async () => {
    const f = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Mobile' } })).body.data;
    let r = await api.call('PATCH', `/v1/smart_fields/${f.id}`, {
      smart_field: { label: 'Mobile phone', required: true, integration_id: directory, integration_attribute: 'phones.mobile' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      label: 'Mobile phone',
      required: true,
      integration_id: directory,
      integration_attribute: 'phones.mobile',
      slug: 'mobile',
    });
    r = await api.call('PATCH', `/v1/smart_fields/${f.id}`, { smart_field: { integration_id: null } });
    expect(r.body.data).toMatchObject({ integration_id: null, integration_attribute: null });
  });

  it('PATCH /v1/smart_fields/{id} linking to an integration that lost access is an error with remediation', async () => {
    const lost = await seedIntegration(api.t.ctx.pool, api.ws, { category: 'teammates', status: 'access_lost', name: 'Entra' });
    const gone = await seedIntegration(api.t.ctx.pool, api.ws, { category: 'smart_fields', status: 'disconnected', name: 'Old' });
    const f = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Office' } })).body.data;
    const r = await api.call('PATCH', `/v1/smart_fields/${f.id}`, { smart_field: { integration_id: lost, integration_attribute: 'officeLocation' } });
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: { type: 'invalid_request_error', code: 'integration_access_lost', message: expect.any(String) },
      remediation: { action: 'reconnect_integration', dashboard_url: expect.any(String), message: expect.any(String) },
    });
    const r2 = await api.call('PATCH', `/v1/smart_fields/${f.id}`, { smart_field: { integration_id: gone, integration_attribute: 'officeLocation' } });
    expect(r2.body.remediation.action).toBe('connect_integration');
  });

  it('PATCH /v1/smart_fields/{id} linking to an id that is no connected integration (unknown, foreign, malformed) answers remediation connect_integration', async () => {
    const f = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Unlinked' } })).body.data;
    const foreignIntegration = await seedIntegration(api.t.ctx.pool, api.otherWs);
    for (const id of [FOREIGN_UUID, foreignIntegration, 'nope']) {
      const r = await api.call('PATCH', `/v1/smart_fields/${f.id}`, { smart_field: { integration_id: id, integration_attribute: 'a' } });
      expect(r.status).toBe(422);
      expect(r.body).toEqual({
        error: { type: 'invalid_request_error', code: 'integration_not_connected', message: expect.any(String) },
        remediation: { action: 'connect_integration', dashboard_url: expect.any(String), message: expect.any(String) },
      });
    }
    expect((await api.call('GET', '/v1/smart_fields?per_page=100')).body.data.find((x: { id: string }) => x.id === f.id).integration_id).toBeNull();
  });

  it('PATCH /v1/smart_fields/{id} linking to a non-directory integration is 422 on smart_field.integration_id', async () => {
    const f = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Region' } })).body.data;
    const mailbox = await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
    const r2 = await api.call('PATCH', `/v1/smart_fields/${f.id}`, { smart_field: { integration_id: mailbox, integration_attribute: 'a' } });
    expect(r2.body.details).toEqual([
      expect.objectContaining({ field: 'smart_field.integration_id', code: 'invalid_category', allowed: ['teammates', 'smart_fields'] }),
    ]);
    const r3 = await api.call('PATCH', `/v1/smart_fields/${f.id}`, { smart_field: { required: 'yes' } });
    expect(r3.body.details).toEqual([expect.objectContaining({ field: 'smart_field.required', code: 'invalid_type' })]);
  });

  it('PATCH /v1/smart_fields/{id} of another workspace or a malformed id is 404', async () => {
    expect((await api.call('PATCH', `/v1/smart_fields/${foreignField}`, { smart_field: { label: 'Mine' } })).status).toBe(404);
    expect((await api.call('PATCH', '/v1/smart_fields/abc', { smart_field: { label: 'Mine' } })).status).toBe(404);
    const theirs = await api.call('GET', '/v1/smart_fields', undefined, api.otherKey);
    expect(theirs.body.data[0].label).toBe('Theirs');
  });

  it('used_in_signatures follows the signature trees, draft or published, variants included', async () => {
    const used = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Used' } })).body.data.id;
    const inVariant = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'In variant' } })).body.data.id;
    const unused = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Unused' } })).body.data.id;
    await api.call('POST', '/v1/signatures', {
      signature: { name: 'Uses', draft_content: tree('x', used), variants: [{ kind: 'reply', draft_content: tree('r', inVariant) }] },
    });
    const list = await api.call('GET', '/v1/smart_fields?per_page=100');
    const flag = (id: string) => list.body.data.find((f: { id: string }) => f.id === id).used_in_signatures;
    expect([flag(used), flag(inVariant), flag(unused)]).toEqual([true, true, false]);
  });

  it('GET /v1/smart_fields pages newest first across pages, caller workspace only', async () => {
    const total = (await api.t.ctx.pool.query('select count(*)::int as n from smart_fields where workspace_id = $1', [api.ws])).rows[0].n;
    const ids: string[] = [];
    for (let page = 1; ; page++) {
      const r = await api.call('GET', `/v1/smart_fields?per_page=5&page=${page}`);
      expect(r.body.pagination).toMatchObject({ page, limit: 5, total_count: total, total_pages: Math.ceil(total / 5), has_more: page < Math.ceil(total / 5) });
      ids.push(...r.body.data.map((f: { id: string }) => f.id));
      if (!r.body.pagination.has_more) break;
    }
    expect(ids).toHaveLength(total);
    expect(ids).not.toContain(foreignField);
    const { rows } = await api.t.ctx.pool.query('select id from smart_fields where workspace_id = $1 order by created_at desc, id desc', [api.ws]);
    expect(ids).toEqual(rows.map((r) => r.id));
  });

  it.each([
    ['GET', '/v1/smart_fields'],
    ['POST', '/v1/smart_fields'],
    ['PATCH', `/v1/smart_fields/${FOREIGN_UUID}`],
  ])('%s %s without a key is 401', async (method, path) => {
    const r = await api.call(method, path, method === 'GET' ? undefined : {}, null);
    expect(r.status).toBe(401);
  });
});
