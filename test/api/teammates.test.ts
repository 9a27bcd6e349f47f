import { beforeAll, describe, expect, it } from 'vitest';
import { clearJobs, eventsOf, FOREIGN_UUID, jobsOf, seedIntegration, seedTeammate, useApi } from './helpers.ts';
import { insertInstallation } from '../helpers/fixtures/installations.ts';
import { insertSmartFieldValue, insertTeammateSource, teammateValues } from '../helpers/fixtures/teammates.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';

describe('teammates and emails API', () => {
  const api = useApi();
  let directory: string;
  let title: string;
  let phone: string;
  let locked: string;
  let foreignTeammate: { id: string; emailIds: string[] };

  beforeAll(async () => {
    directory = await seedIntegration(api.t.ctx.pool, api.ws, { category: 'teammates', name: 'Google Directory' });
    title = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Title' } })).body.data.id;
    phone = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Phone', kind: 'phone' } })).body.data.id;
    locked = (
      await api.call('POST', '/v1/smart_fields', {
        smart_field: { label: 'Department', integration_id: directory, integration_attribute: 'organizations.primary.department' },
      })
    ).body.data.id;
    foreignTeammate = await seedTeammate(api.t.ctx.pool, api.otherWs, 'Stranger');
  });

  it('GET /v1/teammates lists teammates with emails (primary first) and smart field values, without deleted ones', async () => {
    const ada = await seedTeammate(api.t.ctx.pool, api.ws, 'Ada', [{ address: 'ada.alias@acme.test' }, { address: 'ada@acme.test', primary: true }]);
    await insertSmartFieldValue(api.t.ctx.pool, api.ws, { teammateId: ada.id, smartFieldId: locked, value: 'Engineering', integrationId: directory });
    const gone = await seedTeammate(api.t.ctx.pool, api.ws, 'Gone');
    await api.t.ctx.pool.query('update teammates set deleted_at = now() where id = $1', [gone.id]);
    const r = await api.call('GET', '/v1/teammates?per_page=100');
    expect(r.status).toBe(200);
    const row = r.body.data.find((t: { id: string }) => t.id === ada.id);
    expect(row).toEqual({
      id: ada.id,
      display_name: 'Ada',
      emails: [
        { id: ada.emailIds[1], address: 'ada@acme.test', primary: true },
        { id: ada.emailIds[0], address: 'ada.alias@acme.test', primary: false },
      ],
      smart_field_values: [{ value: 'Engineering', smart_field_id: locked, integration_id: directory, source: 'integration' }],
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const ids = r.body.data.map((t: { id: string }) => t.id);
    expect(ids).not.toContain(gone.id);
    expect(ids).not.toContain(foreignTeammate.id);
  });

  it('GET /v1/teammates pages across pages newest first', async () => {
    for (let i = 0; i < 6; i++) await seedTeammate(api.t.ctx.pool, api.ws, `Paged ${i}`);
    const total = (await api.t.ctx.pool.query('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [api.ws])).rows[0].n;
    const p1 = await api.call('GET', '/v1/teammates?per_page=3');
    expect(p1.body.pagination).toEqual({ page: 1, limit: 3, total_count: total, total_pages: Math.ceil(total / 3), has_more: true });
    expect(p1.body.data[0].display_name).toBe('Paged 5');
    const last = await api.call('GET', `/v1/teammates?per_page=3&page=${Math.ceil(total / 3)}`);
    expect(last.body.pagination.has_more).toBe(false);
    const beyond = await api.call('GET', `/v1/teammates?per_page=3&page=${Math.ceil(total / 3) + 1}`);
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.pagination.has_more).toBe(false);
    const bad = await api.call('GET', '/v1/teammates?page=0');
    expect(bad.status).toBe(422);
    expect(bad.body.details[0].field).toBe('page');
  });

  it('PATCH /v1/teammates/{id} writes manual values and requests installs for that teammate', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Grace');
    await clearJobs(api.t.ctx.pool);
    const r = await api.call('PATCH', `/v1/teammates/${t.id}`, {
      teammate: {
        smart_fields: [
          { smart_field_id: title, value: 'Admiral' },
          { smart_field_id: phone, value: '+1 555' },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.smart_field_values).toEqual([
      { value: 'Admiral', smart_field_id: title, integration_id: null, source: 'manual' },
      { value: '+1 555', smart_field_id: phone, integration_id: null, source: 'manual' },
    ]);
    expect(await teammateValues(api.t.ctx.pool, t.id)).toEqual({
      [title]: { value: 'Admiral', integration_id: null, source: 'manual' },
      [phone]: { value: '+1 555', integration_id: null, source: 'manual' },
    });
    expect((await jobsOf(api.t.ctx.pool, 'fanout_teammates')).map((j) => j.payload)).toEqual([{ workspaceId: api.ws, teammateIds: [t.id] }]);
  });

  it("GET /v1/teammates and PATCH's answer give a teammate's values in their fields' order: position, then slug", async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Edsger');
    // Written in the reverse of that order, so that the order the rows were stored in is the wrong one.
    const late = await insertSmartField(api.t.ctx.pool, api.ws, { slug: 'order_late', position: 9 });
    const b = await insertSmartField(api.t.ctx.pool, api.ws, { slug: 'order_b', position: 7 });
    const a = await insertSmartField(api.t.ctx.pool, api.ws, { slug: 'order_a', position: 7 });
    for (const [field, value] of [
      [late, 'late'],
      [b, 'b'],
      [a, 'a'],
    ] as const)
      await insertSmartFieldValue(api.t.ctx.pool, api.ws, { teammateId: t.id, smartFieldId: field, value });
    const listed = (await api.call('GET', '/v1/teammates?per_page=100')).body.data.find((x: { id: string }) => x.id === t.id);
    expect(listed.smart_field_values.map((v: { value: string }) => v.value)).toEqual(['a', 'b', 'late']);
    // Title is the workspace's first field (position 0).
    const patched = await api.call('PATCH', `/v1/teammates/${t.id}`, { teammate: { smart_fields: [{ smart_field_id: title, value: 'title' }] } });
    expect(patched.body.data.smart_field_values.map((v: { value: string }) => v.value)).toEqual(['title', 'a', 'b', 'late']);
  });

  it('PATCH /v1/teammates/{id} with value null removes the value; an unchanged value requests no install', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Linus');
    await api.call('PATCH', `/v1/teammates/${t.id}`, { teammate: { smart_fields: [{ smart_field_id: title, value: 'Kernel' }] } });
    await clearJobs(api.t.ctx.pool);
    const same = await api.call('PATCH', `/v1/teammates/${t.id}`, { teammate: { smart_fields: [{ smart_field_id: title, value: 'Kernel' }] } });
    expect(same.status).toBe(200);
    expect(await jobsOf(api.t.ctx.pool, 'fanout_teammates')).toEqual([]);
    const r = await api.call('PATCH', `/v1/teammates/${t.id}`, { teammate: { smart_fields: [{ smart_field_id: title, value: null }] } });
    expect(r.body.data.smart_field_values).toEqual([]);
    expect(await jobsOf(api.t.ctx.pool, 'fanout_teammates')).toHaveLength(1);
  });

  it('PATCH /v1/teammates/{id} refuses a field locked by an integration with a 422 detail and writes nothing', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Barbara');
    const r = await api.call('PATCH', `/v1/teammates/${t.id}`, {
      teammate: {
        smart_fields: [
          { smart_field_id: title, value: 'CTO' },
          { smart_field_id: locked, value: 'Hacked' },
        ],
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.details).toEqual([
      {
        field: 'teammate.smart_fields[1].smart_field_id',
        code: 'locked_by_integration',
        message: expect.stringContaining('Google Directory'),
        allowed: [],
        missing: [],
      },
    ]);
    expect(await teammateValues(api.t.ctx.pool, t.id)).toEqual({});
  });

  it('PATCH /v1/teammates/{id} with unknown fields, a foreign smart field or no wrapper is 422 with the paths', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Margaret');
    const r = await api.call('PATCH', `/v1/teammates/${t.id}`, {
      teammate: {
        smart_fields: [
          { smart_field_id: FOREIGN_UUID, value: 'x' },
          { smart_field_id: title, value: 5 },
        ],
        name: 'M',
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.details.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual([
      'teammate.name:unknown_field',
      'teammate.smart_fields[1].value:invalid_type',
    ]);
    const r2 = await api.call('PATCH', `/v1/teammates/${t.id}`, { teammate: { smart_fields: [{ smart_field_id: FOREIGN_UUID, value: 'x' }] } });
    expect(r2.body.details).toEqual([expect.objectContaining({ field: 'teammate.smart_fields[0].smart_field_id', code: 'not_found' })]);
    const r3 = await api.call('PATCH', `/v1/teammates/${t.id}`, {});
    expect(r3.body.details).toEqual([expect.objectContaining({ field: 'teammate', code: 'required' })]);
  });

  it('PATCH /v1/teammates/{id} of another workspace, a deleted teammate or a malformed id is 404', async () => {
    const gone = await seedTeammate(api.t.ctx.pool, api.ws, 'Deleted before');
    await api.t.ctx.pool.query('update teammates set deleted_at = now() where id = $1', [gone.id]);
    for (const id of [foreignTeammate.id, gone.id, 'x']) {
      const r = await api.call('PATCH', `/v1/teammates/${id}`, { teammate: { smart_fields: [] } });
      expect(r.status).toBe(404);
    }
  });

  it('DELETE /v1/teammates/{id} soft-deletes, writes teammate.deleted, marks installations not_installed and answers 204', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Departing', [{ address: 'departing@acme.test', primary: true }, { address: 'dep@acme.test' }]);
    const gmail = await seedIntegration(api.t.ctx.pool, api.ws, { category: 'signatures', name: 'Gmail' });
    const sig = await api.call('POST', '/v1/signatures', { signature: { name: 'S', draft_content: { type: 'stack', children: [] } } });
    await insertInstallation(api.t.ctx.pool, api.ws, { emailId: t.emailIds[0]!, signatureId: sig.body.data.id, integrationId: gmail, status: 'installed' });
    await insertInstallation(api.t.ctx.pool, api.ws, { emailId: t.emailIds[1]!, signatureId: sig.body.data.id, integrationId: gmail, status: 'failed' });
    const r = await api.call('DELETE', `/v1/teammates/${t.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    const { rows } = await api.t.ctx.pool.query('select deleted_at from teammates where id = $1', [t.id]);
    expect(rows[0].deleted_at).toBeInstanceOf(Date);
    const inst = await api.t.ctx.pool.query('select status, failing_since from installations where email_id = any($1::uuid[])', [t.emailIds]);
    expect(inst.rows).toEqual([
      { status: 'not_installed', failing_since: null },
      { status: 'not_installed', failing_since: null },
    ]);
    const events = await eventsOf(api.t.ctx.pool, api.ws, 'teammate.deleted');
    expect(events.at(-1)!.payload).toEqual({
      type: 'teammate.deleted',
      occurred_at: expect.any(String),
      teammate: { uuid: t.id, display_name: 'Departing' },
      emails: [
        { uuid: t.emailIds[0], address: 'departing@acme.test', primary: true },
        { uuid: t.emailIds[1], address: 'dep@acme.test', primary: false },
      ],
    });
    const list = await api.call('GET', '/v1/teammates?per_page=100');
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(t.id);
    // Deleting again finds nobody.
    expect((await api.call('DELETE', `/v1/teammates/${t.id}`)).status).toBe(404);
  });

  it('DELETE /v1/teammates/{id} of a teammate a connected directory lists is refused with remediation; after a disconnect it works', async () => {
    const pool = api.t.ctx.pool;
    const directory = await seedIntegration(pool, api.ws, { category: 'teammates', name: 'Directory A' });
    const lost = await seedIntegration(pool, api.ws, { category: 'teammates', name: 'Directory B', status: 'access_lost' });
    const listed = await seedTeammate(pool, api.ws, 'Listed Person');
    const stranded = await seedTeammate(pool, api.ws, 'Stranded Person');
    await insertTeammateSource(pool, api.ws, { integrationId: directory, externalId: 'u-listed', teammateId: listed.id });
    await insertTeammateSource(pool, api.ws, { integrationId: lost, externalId: 'u-stranded', teammateId: stranded.id });
    const managed = await api.call('DELETE', `/v1/teammates/${listed.id}`);
    expect(managed.status).toBe(422);
    expect(managed.body).toEqual({
      error: { type: 'invalid_request_error', code: 'teammate_managed_by_integration', message: expect.stringContaining('Directory A') },
      remediation: { action: 'edit_in_directory', dashboard_url: expect.any(String), message: expect.any(String) },
    });
    const reconnect = await api.call('DELETE', `/v1/teammates/${stranded.id}`);
    expect(reconnect.status).toBe(422);
    expect(reconnect.body).toMatchObject({ error: { code: 'integration_access_lost' }, remediation: { action: 'reconnect_integration' } });
    expect(
      (await pool.query('select count(*)::int as n from teammates where id = any($1::uuid[]) and deleted_at is null', [[listed.id, stranded.id]])).rows[0].n,
    ).toBe(2);
    await pool.query(`update integrations set status = 'disconnected' where id = $1`, [directory]);
    expect((await api.call('DELETE', `/v1/teammates/${listed.id}`)).status).toBe(204);
  });

  it('DELETE /v1/teammates/{id} of another workspace is 404 and deletes nothing', async () => {
    const r = await api.call('DELETE', `/v1/teammates/${foreignTeammate.id}`);
    expect(r.status).toBe(404);
    expect((await api.t.ctx.pool.query('select deleted_at from teammates where id = $1', [foreignTeammate.id])).rows[0].deleted_at).toBeNull();
    expect((await api.call('DELETE', '/v1/teammates/zzz')).status).toBe(404);
  });

  it('DELETE /v1/emails/{id} removes a secondary address with 204 and reinstalls the teammate', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Two addresses', [{ address: 'two@acme.test', primary: true }, { address: 'old@acme.test' }]);
    await clearJobs(api.t.ctx.pool);
    const r = await api.call('DELETE', `/v1/emails/${t.emailIds[1]}`);
    expect(r.status).toBe(204);
    expect((await api.t.ctx.pool.query('select 1 from emails where id = $1', [t.emailIds[1]])).rowCount).toBe(0);
    expect((await jobsOf(api.t.ctx.pool, 'fanout_teammates')).map((j) => j.payload.teammateIds)).toEqual([[t.id]]);
  });

  it('DELETE /v1/emails/{id} of a primary address is an error with remediation and keeps it', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Primary only');
    const r = await api.call('DELETE', `/v1/emails/${t.emailIds[0]}`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: { type: 'invalid_request_error', code: 'primary_email', message: expect.any(String) },
      remediation: { action: 'change_primary_email', dashboard_url: expect.stringContaining(t.id), message: expect.any(String) },
    });
    expect((await api.t.ctx.pool.query('select 1 from emails where id = $1', [t.emailIds[0]])).rowCount).toBe(1);
  });

  it('DELETE /v1/emails/{id} of an address a directory manages is an error with remediation edit_in_directory', async () => {
    const t = await seedTeammate(api.t.ctx.pool, api.ws, 'Synced', [
      { address: 'synced@acme.test', primary: true, integrationId: directory },
      { address: 'alias@acme.test', integrationId: directory },
    ]);
    const r = await api.call('DELETE', `/v1/emails/${t.emailIds[1]}`);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe('email_managed_by_integration');
    expect(r.body.remediation.action).toBe('edit_in_directory');
  });

  it('DELETE /v1/emails/{id} of another workspace or a malformed id is 404', async () => {
    expect((await api.call('DELETE', `/v1/emails/${foreignTeammate.emailIds[0]}`)).status).toBe(404);
    expect((await api.call('DELETE', '/v1/emails/1')).status).toBe(404);
  });

  it.each([
    ['GET', '/v1/teammates'],
    ['PATCH', `/v1/teammates/${FOREIGN_UUID}`],
    ['DELETE', `/v1/teammates/${FOREIGN_UUID}`],
    ['DELETE', `/v1/emails/${FOREIGN_UUID}`],
  ])('%s %s without a key is 401', async (method, path) => {
    const r = await api.call(method, path, method === 'PATCH' ? {} : undefined, null);
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('unauthorized');
  });
});
