import { describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { SPEC_SECTION_4, useApi } from './helpers.ts';

/** The endpoints of spec section 4, without the content schema (checked apart below). */
const SPEC_OPERATIONS = SPEC_SECTION_4.filter((op) => !op.endsWith('/v1/content_schema'));
/**
 * Not in the spec: reading and deleting assets, assignments, reading one sync run, the Outlook add-in's fetch (add-in keys only), the directory's
 * groups, a signature's mail-client compatibility, the analytics settings, the installations list and the audit trail.
 */
const EXTRA_OPERATIONS = [
  'get /v1/assets',
  'get /v1/assets/{id}',
  'delete /v1/assets/{id}',
  'get /v1/signatures/{id}/assignments',
  'put /v1/signatures/{id}/assignments',
  'get /v1/integrations/sync/{id}',
  'get /v1/addin/signature',
  'get /v1/groups',
  'get /v1/signatures/{id}/compatibility',
  'get /v1/workspace/analytics_settings',
  'patch /v1/workspace/analytics_settings',
  'get /v1/installations',
  'get /v1/audit_entries',
  'get /v1/workspace/privacy_settings',
  'patch /v1/workspace/privacy_settings',
  'get /v1/analytics/visitors/{visitor_id}/export',
  'delete /v1/analytics/visitors/{visitor_id}',
  'get /v1/marketing_campaigns/{id}/experiments',
  'post /v1/marketing_campaigns/{id}/experiments',
  'get /v1/experiments/{id}',
  'post /v1/experiments/{id}/start',
  'post /v1/experiments/{id}/stop',
  'post /v1/experiments/{id}/promote',
];
const LISTS = ['/v1/signatures', '/v1/smart_fields', '/v1/teammates', '/v1/folders', '/v1/marketing_campaigns', '/v1/assets', '/v1/financial_documents'];

type Doc = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string }[];
        requestBody?: { content: Record<string, { schema: { required?: string[]; properties?: Record<string, unknown> } }> };
        responses: Record<string, unknown>;
      }
    >
  >;
  components: { securitySchemes: Record<string, unknown> };
  security: unknown[];
};

describe('OpenAPI document', () => {
  const api = useApi();
  const fetchDoc = async () => (await api.call('GET', '/v1/openapi.json', undefined, null)).body as Doc;

  it('GET /v1/openapi.json is served without a key', async () => {
    const r = await api.call('GET', '/v1/openapi.json', undefined, null);
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe('3.1.0');
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(await fetchDoc());
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds exactly the spec section 4 paths (plus assignments, a sync run, the add-in fetch, groups, the compatibility report, the analytics settings, the installations list and the audit trail), and nothing operational', async () => {
    const doc = await fetchDoc();
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`));
    for (const op of [...SPEC_OPERATIONS, ...EXTRA_OPERATIONS]) expect(ops).toContain(op);
    const ours = ops.filter((op) => !op.endsWith('/v1/content_schema'));
    expect(ours.sort()).toEqual([...SPEC_OPERATIONS, ...EXTRA_OPERATIONS].sort());
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/v1/'))).toBe(true);
  });

  it('declares bearer auth, the paging parameters, the write wrappers and the error responses', async () => {
    const doc = await fetchDoc();
    expect(doc.components.securitySchemes.BearerApiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ BearerApiKey: [] }]);
    for (const list of LISTS) {
      expect(doc.paths[list]!.get!.parameters!.map((p) => `${p.in}:${p.name}`)).toEqual(['query:page', 'query:per_page']);
    }
    const wrapper = (path: string, method: string) => doc.paths[path]![method]!.requestBody!.content['application/json']!.schema;
    expect(wrapper('/v1/signatures', 'post').required).toEqual(['signature']);
    expect(wrapper('/v1/folders', 'post').required).toEqual(['folder']);
    expect(wrapper('/v1/assets', 'post').required).toEqual(['asset']);
    expect(wrapper('/v1/assets/{id}', 'patch').required).toEqual(['asset']);
    expect(wrapper('/v1/smart_fields/{id}', 'patch').required).toEqual(['smart_field']);
    expect(wrapper('/v1/teammates/{id}', 'patch').required).toEqual(['teammate']);
    expect(wrapper('/v1/marketing_campaigns', 'post').required).toEqual(['marketing_campaign']);
    for (const op of SPEC_OPERATIONS.filter((o) => !/workspace|integrations/.test(o))) {
      const [method, path] = op.split(' ') as [string, string];
      expect(Object.keys(doc.paths[path]![method]!.responses), op).toContain('401');
    }
    expect(Object.keys(doc.paths['/v1/teammates/{id}']!.delete!.responses)).toContain('204');
  });
});
