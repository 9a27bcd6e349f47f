/**
 * Walks every endpoint of spec section 4: each answers its envelope (`{data}`, `{data, pagination}`,
 * 204, or the spec's error body); an endpoint not served would answer 401 without a key and
 * route_not_found with one, and fails the walk. Also: auth comes before routing, and body-less
 * operations accept `Content-Type: application/json` with an empty body.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { seedIntegration, seedTeammate, SPEC_SECTION_4, tree, useApi, type Res } from './helpers.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const BODYLESS = ['publish', 'install', 'schedule', 'pause', 'resume'];

function expectEnvelope(op: string, r: Res): void {
  if (r.status === 204) return void expect(r.text, op).toBe('');
  if (r.status >= 400) {
    expect(r.body?.error, `${op}: ${r.text.slice(0, 200)}`).toEqual({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
    return;
  }
  expect(r.body, op).toHaveProperty('data');
  if (r.body.pagination !== undefined || (op.startsWith('get ') && Array.isArray(r.body.data))) {
    expect(Array.isArray(r.body.data), op).toBe(true);
    expect(Object.keys(r.body.pagination).sort(), op).toEqual(['has_more', 'limit', 'page', 'total_count', 'total_pages']);
  } else {
    expect(typeof r.body.data, op).toBe('object');
  }
}

describe('spec section 4, endpoint by endpoint', () => {
  const api = useApi();
  const ids: Record<string, string> = {};
  let served: Set<string>;

  beforeAll(async () => {
    const pool = api.t.ctx.pool;
    const doc = (await api.call('GET', '/v1/openapi.json', undefined, null)).body as { paths: Record<string, Record<string, unknown>> };
    served = new Set(Object.entries(doc.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m} ${p}`)));
    await seedIntegration(pool, api.ws, { category: 'signatures', name: 'Gmail' });
    await setEventTracking(pool, api.ws, true);
    const t = await seedTeammate(pool, api.ws, 'Walker', [{ address: 'walker@acme.test', primary: true }, { address: 'alias@acme.test' }]);
    ids.teammate = t.id;
    ids.email = t.emailIds[1]!;
    const variants = [{ kind: 'reply', draft_content: tree('Reply') }];
    ids.signature = (await api.call('POST', '/v1/signatures', { signature: { name: 'Walked', draft_content: tree(), variants } })).body.data.id;
    ids.smartField = (await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Walked field' } })).body.data.id;
    ids.folder = (await api.call('POST', '/v1/folders', { folder: { name: 'Walked folder' } })).body.data.id;
    ids.asset = (await api.call('POST', '/v1/assets', { asset: { file_base64: PNG, filename: 'walk.png' } })).body.data.id;
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const end = new Date(Date.now() + 30 * 86_400_000).toISOString();
    ids.campaign = (
      await api.call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: { name: 'Walked', start_time: start, end_time: end, content: tree('Banner'), signature_template_ids: [ids.signature] },
      })
    ).body.data.id;
  });

  /** The call, in spec order, and the status it must answer; bodies are minimal valid ones. */
  function request(op: string): { method: string; path: string; body?: unknown; status: number } {
    const [method, template] = op.split(' ') as [string, string];
    const id = template.includes('/signatures/')
      ? ids.signature
      : template.includes('/smart_fields/')
        ? ids.smartField
        : template.includes('/teammates/')
          ? ids.teammate
          : template.includes('/emails/')
            ? ids.email
            : template.includes('/assets/')
              ? ids.asset
              : template.includes('/folders/')
                ? ids.folder
                : ids.campaign;
    const unknown = '00000000-0000-4000-8000-000000000000';
    const path = template
      .replace('{signature_id}', ids.signature!)
      .replace('{kind}', 'reply')
      .replace('{id}', id!)
      .replace('{anchor_uuid}', unknown)
      .replace('{visitor_id}', unknown);
    const bodies: Record<string, unknown> = {
      'post /v1/signatures': { signature: { name: 'Walk new', draft_content: tree() } },
      'patch /v1/signatures/{id}': { signature: { name: 'Walked again' } },
      'post /v1/smart_fields': { smart_field: { label: 'Walk new field' } },
      'patch /v1/smart_fields/{id}': { smart_field: { label: 'Walked field 2' } },
      'patch /v1/teammates/{id}': { teammate: { smart_fields: [{ smart_field_id: ids.smartField, value: 'x' }] } },
      'post /v1/assets': { asset: { file_base64: PNG, filename: 'walk-again.png' } },
      'patch /v1/assets/{id}': { asset: { name: 'Walked asset' } },
      'post /v1/folders': { folder: { name: 'Walk new folder' } },
      'patch /v1/folders/{id}': { folder: { name: 'Walked folder 2' } },
      'post /v1/marketing_campaigns': { marketing_campaign: { name: 'Walk new' } },
      'patch /v1/marketing_campaigns/{id}': { marketing_campaign: { name: 'Walked 2' } },
      'post /v1/analytics/events': { event: { name: 'signup' } },
    };
    const status: Record<string, number> = {
      'post /v1/signatures': 201,
      'post /v1/signatures/{id}/install': 202,
      'post /v1/smart_fields': 201,
      'post /v1/folders': 201,
      'post /v1/marketing_campaigns': 201,
      // Same bytes as the asset made before: the existing one.
      'post /v1/assets': 200,
      'delete /v1/teammates/{id}': 204,
      'delete /v1/emails/{id}': 204,
      'delete /v1/folders/{id}': 204,
      // No directory integration: the remediation error body.
      'post /v1/integrations/sync': 422,
      // Nothing tracked yet: the error object.
      'get /v1/anchors/{anchor_uuid}/analytics': 404,
      'get /v1/analytics/visitors/{visitor_id}': 404,
    };
    return { method: method.toUpperCase(), path, body: bodies[op], status: status[op] ?? 200 };
  }

  it('every endpoint of section 4 is served and answers its envelope', async () => {
    expect(SPEC_SECTION_4).toHaveLength(41);
    const missing: string[] = [];
    // In spec order, except the teammate's deletion, which goes after its address's.
    const order = [...SPEC_SECTION_4.filter((op) => op !== 'delete /v1/teammates/{id}'), 'delete /v1/teammates/{id}'];
    for (const op of order) {
      const { method, path, body, status } = request(op);
      if (!served.has(op)) {
        missing.push(op);
        const concrete = path.replace(/\{\w+\}/g, '00000000-0000-4000-8000-000000000000');
        expect((await api.call(method, concrete, undefined, null)).status, op).toBe(401);
        const r = await api.call(method, concrete, method === 'GET' ? undefined : {});
        expect([r.status, r.body.error.code], op).toEqual([404, 'route_not_found']);
        continue;
      }
      const r = await api.call(method, path, body);
      expect(r.status, `${op}: ${r.text.slice(0, 300)}`).toBe(status);
      expectEnvelope(op, r);
      if (r.status === 422) expect(r.body.remediation, op).toMatchObject({ action: 'connect_integration' });
    }
    expect(missing).toEqual([]);
  });

  it('auth comes before routing: an unknown /v1 path with a missing or wrong key is 401, with the right key 404', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nope'],
      ['POST', '/v1/signatures/x/nope'],
      ['PUT', '/v1/folders'],
      ['GET', '/v1'],
      ['GET', '/v1/?x=1'],
    ] as const) {
      expect((await api.call(method, path, undefined, null)).status, `${method} ${path} without a key`).toBe(401);
      const wrong = await api.call(method, path, undefined, 'sgs_' + 'x'.repeat(32));
      expect(wrong.status).toBe(401);
      expect(wrong.body.error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
      const found = await api.call(method, path, undefined);
      expect([found.status, found.body.error.code], `${method} ${path}`).toEqual([404, 'route_not_found']);
    }
    // Outside /v1 nothing changes.
    expect((await api.call('GET', '/nope', undefined, null)).status).toBe(404);
  });

  it('body-less operations accept Content-Type: application/json with an empty body; operations with a body still need one', async () => {
    const send = async (method: string, path: string) => {
      const r = await fetch(`${api.base}${path}`, { method, headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' }, body: '' });
      return { status: r.status, text: await r.text() };
    };
    const sig = (
      await api.call('POST', '/v1/signatures', {
        signature: { name: 'Empty bodies', draft_content: tree(), variants: [{ kind: 'internal', draft_content: tree('In') }] },
      })
    ).body.data.id;
    for (const action of BODYLESS.slice(0, 2)) expect((await send('POST', `/v1/signatures/${sig}/${action}`)).status, action).toBeLessThan(300);
    expect((await send('POST', `/v1/signatures/${sig}/variants/internal/publish`)).status).toBe(200);
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const c = (
      await api.call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: { name: 'Empty', start_time: start, content: tree('B'), signature_template_ids: [sig] },
      })
    ).body.data.id;
    for (const action of BODYLESS.slice(2)) {
      const r = await send('POST', `/v1/marketing_campaigns/${c}/${action}`);
      expect(r.status, `${action}: ${r.text}`).toBe(200);
    }
    const folder = (await api.call('POST', '/v1/folders', { folder: { name: 'Empty body' } })).body.data.id;
    expect((await send('DELETE', `/v1/folders/${folder}`)).status).toBe(204);
    const withBody = await send('POST', '/v1/folders');
    expect(withBody.status).toBe(422);
    expect(JSON.parse(withBody.text).details[0]).toMatchObject({ field: 'body' });
  });
});
