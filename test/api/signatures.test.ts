import { beforeAll, describe, expect, it } from 'vitest';
import { clearJobs, eventsOf, FOREIGN_UUID, jobsOf, tree, useApi } from './helpers.ts';

describe('signatures API', () => {
  const api = useApi();
  let foreignSignature: string;
  let smartField: string;

  beforeAll(async () => {
    const other = await api.call('POST', '/v1/signatures', { signature: { name: 'Theirs', draft_content: tree() } }, api.otherKey);
    foreignSignature = other.body.data.id;
    const sf = await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Job title' } });
    smartField = sf.body.data.id;
  });

  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const r = await api.call('POST', '/v1/signatures', { signature: { name, draft_content: tree(name), ...extra } });
    expect(r.status).toBe(201);
    return r.body.data as { id: string; [k: string]: unknown };
  };

  it('POST /v1/signatures creates a draft signature and answers {data: signature} with 201', async () => {
    const r = await api.call('POST', '/v1/signatures', { signature: { name: 'Sales', draft_content: tree('Hi', smartField) } });
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({
      name: 'Sales',
      kind: 'primary',
      folder_uuid: null,
      content: null,
      draft_content: tree('Hi', smartField),
      last_published_at: null,
      installation_activated: true,
    });
    expect(r.body.data.variants).toEqual([
      expect.objectContaining({ kind: 'reply', exists: false, id: null, draft_content: null }),
      expect.objectContaining({ kind: 'internal', exists: false, id: null }),
    ]);
    expect(r.body.data.created_at).toMatch(/Z$/);
  });

  it('POST /v1/signatures stores variant drafts given in signature.variants', async () => {
    const s = await create('With reply', { variants: [{ kind: 'reply', draft_content: tree('Reply'), show_marketing_campaigns: true }] });
    const reply = (s.variants as { kind: string }[]).find((v) => v.kind === 'reply');
    expect(reply).toMatchObject({ exists: true, draft_content: tree('Reply'), content: null, show_marketing_campaigns: true, activated: false });
  });

  it('POST /v1/signatures without the wrapper is 422 with details[].field = signature', async () => {
    const r = await api.call('POST', '/v1/signatures', { name: 'x', draft_content: tree() });
    expect(r.status).toBe(422);
    expect(r.body.error).toEqual({ type: 'invalid_request_error', code: 'validation_failed', message: expect.any(String) });
    expect(r.body.details).toEqual(
      expect.arrayContaining([
        { field: 'signature', code: 'required', message: expect.any(String), allowed: [], missing: [] },
        expect.objectContaining({ field: 'name', code: 'unknown_field' }),
        expect.objectContaining({ field: 'draft_content', code: 'unknown_field' }),
      ]),
    );
  });

  it('POST /v1/signatures with an unknown field, a wrong type and a missing field names each field', async () => {
    const r = await api.call('POST', '/v1/signatures', { signature: { name: 42, colour: 'red' } });
    expect(r.status).toBe(422);
    const byField = Object.fromEntries(r.body.details.map((d: { field: string; code: string }) => [d.field, d.code]));
    expect(byField).toEqual({ 'signature.name': 'invalid_type', 'signature.colour': 'unknown_field', 'signature.draft_content': 'required' });
  });

  it('POST /v1/signatures with an invalid tree is 422 pointing into signature.draft_content', async () => {
    const bad = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'x', textStyle: { fontSize: 'big' } }] }] };
    const r = await api.call('POST', '/v1/signatures', { signature: { name: 'Bad', draft_content: bad } });
    expect(r.status).toBe(422);
    expect(r.body.details[0].field).toBe('signature.draft_content.children[0].tokens[0].textStyle.fontSize');
  });

  it('POST /v1/signatures with a smart field of another workspace in the tree is 422', async () => {
    const r = await api.call('POST', '/v1/signatures', { signature: { name: 'Bad ref', draft_content: tree('x', FOREIGN_UUID) } });
    expect(r.status).toBe(422);
    expect(r.body.details[0].field).toMatch(/^signature\.draft_content\.children\[0\]\.tokens\[1\]\.smartFieldUuid/);
  });

  it('POST /v1/signatures with a folder of another workspace is 422 on signature.folder_uuid', async () => {
    const folder = await api.call('POST', '/v1/folders', { folder: { name: 'Theirs' } }, api.otherKey);
    const r = await api.call('POST', '/v1/signatures', { signature: { name: 'x', draft_content: tree(), folder_uuid: folder.body.data.id } });
    expect(r.status).toBe(422);
    expect(r.body.details).toEqual([expect.objectContaining({ field: 'signature.folder_uuid', code: 'not_found' })]);
  });

  it('POST /v1/signatures with a body that is not JSON is 422', async () => {
    const r = await api.raw('POST', '/v1/signatures', '{"signature":');
    expect(r.status).toBe(422);
    expect(r.body.details[0]).toMatchObject({ field: 'body', code: 'invalid_json' });
  });

  it('PATCH /v1/signatures/{id} changes the draft and leaves the published content alone', async () => {
    const s = await create('Patchable');
    await api.call('POST', `/v1/signatures/${s.id}/publish`);
    const folder = await api.call('POST', '/v1/folders', { folder: { name: 'Marketing' } });
    const r = await api.call('PATCH', `/v1/signatures/${s.id}`, {
      signature: { name: 'Renamed', draft_content: tree('New draft'), folder_uuid: folder.body.data.id },
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ name: 'Renamed', draft_content: tree('New draft'), content: tree('Patchable'), folder_uuid: folder.body.data.id });
  });

  it('PATCH /v1/signatures/{id} writes a variant draft; draft_content null clears it', async () => {
    const s = await create('Variants');
    let r = await api.call('PATCH', `/v1/signatures/${s.id}`, {
      signature: { variants: [{ kind: 'internal', draft_content: tree('Internal'), activated: true }] },
    });
    expect(r.body.data.variants[1]).toMatchObject({ kind: 'internal', exists: true, activated: true, draft_content: tree('Internal') });
    r = await api.call('PATCH', `/v1/signatures/${s.id}`, { signature: { variants: [{ kind: 'internal', draft_content: null }] } });
    expect(r.body.data.variants[1]).toMatchObject({ exists: true, activated: true, draft_content: null });
  });

  it('PATCH /v1/signatures/{id} with a repeated variant kind is 422 on signature.variants[1].kind', async () => {
    const s = await create('Dup variants');
    const r = await api.call('PATCH', `/v1/signatures/${s.id}`, { signature: { variants: [{ kind: 'reply' }, { kind: 'reply' }] } });
    expect(r.status).toBe(422);
    expect(r.body.details).toEqual([expect.objectContaining({ field: 'signature.variants[1].kind', code: 'duplicate' })]);
  });

  it('PATCH /v1/signatures/{id} with an unknown variant kind is 422 listing the allowed kinds', async () => {
    const s = await create('Bad kind');
    const r = await api.call('PATCH', `/v1/signatures/${s.id}`, { signature: { variants: [{ kind: 'forward' }] } });
    expect(r.status).toBe(422);
    expect(r.body.details[0]).toMatchObject({ field: 'signature.variants[0].kind', code: 'invalid_value', allowed: ['reply', 'internal'] });
  });

  it('PATCH /v1/signatures/{id} of another workspace, or a malformed id, is 404', async () => {
    for (const id of [foreignSignature, 'not-a-uuid', FOREIGN_UUID]) {
      const r = await api.call('PATCH', `/v1/signatures/${id}`, { signature: { name: 'Mine now' } });
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
    }
    const theirs = await api.call('GET', '/v1/signatures', undefined, api.otherKey);
    expect(theirs.body.data[0].name).toBe('Theirs');
  });

  it('POST /v1/signatures/{id}/publish copies the draft, writes signature.published and enqueues fanout_signature in one go', async () => {
    await clearJobs(api.t.ctx.pool);
    const s = await create('Publishable');
    const r = await api.call('POST', `/v1/signatures/${s.id}/publish`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ id: s.id, content: tree('Publishable'), draft_content: tree('Publishable') });
    expect(r.body.data.last_published_at).toMatch(/Z$/);
    const events = await eventsOf(api.t.ctx.pool, api.ws, 'signature.published');
    expect(events.at(-1)!.payload).toEqual({
      type: 'signature.published',
      occurred_at: expect.any(String),
      signature: { uuid: s.id, name: 'Publishable', kind: 'primary', folder_uuid: null },
    });
    const jobs = await jobsOf(api.t.ctx.pool, 'fanout_signature');
    expect(jobs).toEqual([{ payload: { workspaceId: api.ws, signatureId: s.id, kinds: ['primary'], forced: false }, key: expect.stringContaining(s.id) }]);
  });

  it('POST /v1/signatures/{id}/publish of another workspace is 404 and publishes nothing', async () => {
    const before = (await eventsOf(api.t.ctx.pool, api.otherWs)).length;
    const r = await api.call('POST', `/v1/signatures/${foreignSignature}/publish`);
    expect(r.status).toBe(404);
    expect((await eventsOf(api.t.ctx.pool, api.otherWs)).length).toBe(before);
    const { rows } = await api.t.ctx.pool.query('select content from signatures where id = $1', [foreignSignature]);
    expect(rows[0].content).toBeNull();
  });

  it('POST /v1/signatures/{id}/install re-triggers a forced install and answers 202 queued', async () => {
    await clearJobs(api.t.ctx.pool);
    const s = await create('Installable');
    await api.call('POST', `/v1/signatures/${s.id}/publish`);
    const r = await api.call('POST', `/v1/signatures/${s.id}/install`);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ data: { signature_id: s.id, status: 'queued' } });
    const jobs = await jobsOf(api.t.ctx.pool, 'fanout_signature');
    expect(jobs.map((j) => j.payload)).toContainEqual({ workspaceId: api.ws, signatureId: s.id, kinds: ['primary', 'reply', 'internal'], forced: true });
  });

  it('POST /v1/signatures/{id}/install of a never published signature is an error with remediation', async () => {
    const s = await create('Never published');
    const r = await api.call('POST', `/v1/signatures/${s.id}/install`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: { type: 'invalid_request_error', code: 'signature_not_published', message: expect.any(String) },
      remediation: { action: 'publish_signature', dashboard_url: expect.stringContaining(s.id), message: expect.any(String) },
    });
  });

  it('POST /v1/signatures/{id}/install of another workspace is 404', async () => {
    const r = await api.call('POST', `/v1/signatures/${foreignSignature}/install`);
    expect(r.status).toBe(404);
  });

  it('POST /v1/signatures/{id}/variants/{kind}/publish publishes the variant and writes signature.published with reply_variant', async () => {
    await clearJobs(api.t.ctx.pool);
    const s = await create('Reply sig', { variants: [{ kind: 'reply', draft_content: tree('Short reply') }] });
    const r = await api.call('POST', `/v1/signatures/${s.id}/variants/reply/publish`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ kind: 'reply', exists: true, content: tree('Short reply'), draft_content: tree('Short reply') });
    expect(r.body.data.last_published_at).toMatch(/Z$/);
    expect(Object.keys(r.body.data).sort()).toEqual(
      [
        'kind',
        'exists',
        'id',
        'activated',
        'hidden',
        'show_marketing_campaigns',
        'content',
        'draft_content',
        'last_published_at',
        'created_at',
        'updated_at',
      ].sort(),
    );
    const events = await eventsOf(api.t.ctx.pool, api.ws, 'signature.published');
    expect(events.at(-1)!.payload.signature).toEqual({ uuid: s.id, name: null, kind: 'reply_variant', folder_uuid: null });
    expect((await jobsOf(api.t.ctx.pool, 'fanout_signature')).map((j) => j.payload)).toEqual([
      { workspaceId: api.ws, signatureId: s.id, kinds: ['reply'], forced: false },
    ]);
    const sig = await api.call('GET', '/v1/signatures?per_page=100');
    expect(sig.body.data.find((x: { id: string }) => x.id === s.id).content).toBeNull();
  });

  it('POST .../variants/internal/publish writes internal_variant', async () => {
    const s = await create('Internal sig', { variants: [{ kind: 'internal', draft_content: tree('Internal') }] });
    const r = await api.call('POST', `/v1/signatures/${s.id}/variants/internal/publish`);
    expect(r.status).toBe(200);
    const events = await eventsOf(api.t.ctx.pool, api.ws, 'signature.published');
    expect(events.at(-1)!.payload.signature).toMatchObject({ uuid: s.id, kind: 'internal_variant' });
  });

  it('POST .../variants/{kind}/publish without a variant draft is an error with remediation and writes no event', async () => {
    const s = await create('No variant');
    const before = (await eventsOf(api.t.ctx.pool, api.ws)).length;
    const r = await api.call('POST', `/v1/signatures/${s.id}/variants/reply/publish`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      error: { type: 'invalid_request_error', code: 'variant_has_no_draft', message: expect.any(String) },
      remediation: { action: 'edit_variant_draft', dashboard_url: expect.stringContaining(s.id), message: expect.any(String) },
    });
    expect((await eventsOf(api.t.ctx.pool, api.ws)).length).toBe(before);
  });

  it('POST .../variants/{kind}/publish with an unknown kind is 422 on the kind with the allowed kinds', async () => {
    const s = await create('Kinds');
    const r = await api.call('POST', `/v1/signatures/${s.id}/variants/forward/publish`);
    expect(r.status).toBe(422);
    expect(r.body.details[0]).toMatchObject({ field: 'kind', code: 'invalid_value', allowed: ['reply', 'internal'] });
  });

  it('POST .../variants/{kind}/publish of another workspace is 404', async () => {
    const r = await api.call('POST', `/v1/signatures/${foreignSignature}/variants/reply/publish`);
    expect(r.status).toBe(404);
  });

  it('GET /v1/signatures pages newest first with has_more and total_pages, and only the caller workspace', async () => {
    const { rows } = await api.t.ctx.pool.query<{ n: number }>('select count(*)::int as n from signatures where workspace_id = $1', [api.ws]);
    const total = rows[0]!.n;
    const seen: string[] = [];
    let page = 1;
    for (;;) {
      const r = await api.call('GET', `/v1/signatures?page=${page}&per_page=4`);
      expect(r.status).toBe(200);
      expect(r.body.pagination).toEqual({ page, limit: 4, total_count: total, total_pages: Math.ceil(total / 4), has_more: page < Math.ceil(total / 4) });
      seen.push(...r.body.data.map((s: { id: string }) => s.id));
      if (!r.body.pagination.has_more) break;
      page++;
    }
    expect(page).toBeGreaterThan(2);
    expect(new Set(seen).size).toBe(total);
    expect(seen).not.toContain(foreignSignature);
    const { rows: ordered } = await api.t.ctx.pool.query('select id from signatures where workspace_id = $1 order by created_at desc, id desc', [api.ws]);
    expect(seen).toEqual(ordered.map((r) => r.id));
  });

  it('GET /v1/signatures with per_page over 100 is 422 on per_page; default per_page is 25', async () => {
    const bad = await api.call('GET', '/v1/signatures?per_page=101');
    expect(bad.status).toBe(422);
    expect(bad.body.details[0]).toMatchObject({ field: 'per_page', code: 'too_big' });
    const ok = await api.call('GET', '/v1/signatures');
    expect(ok.body.pagination.limit).toBe(25);
  });

  it.each([
    ['GET', '/v1/signatures'],
    ['POST', '/v1/signatures'],
    ['PATCH', `/v1/signatures/${FOREIGN_UUID}`],
    ['POST', `/v1/signatures/${FOREIGN_UUID}/publish`],
    ['POST', `/v1/signatures/${FOREIGN_UUID}/install`],
    ['POST', `/v1/signatures/${FOREIGN_UUID}/variants/reply/publish`],
  ])('%s %s without a key is 401 with the error object', async (method, path) => {
    const r = await api.call(method, path, method === 'GET' ? undefined : {}, null);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: { type: 'authentication_error', code: 'unauthorized', message: expect.any(String) } });
  });
});
