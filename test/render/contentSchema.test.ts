/** GET /v1/content_schema through the real server with a real API key. */
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SCHEMA_VERSION, contentTreeJsonSchema } from '../../src/render/contentSchema.ts';
import { renderSignature } from '../../src/render/render.ts';
import { validateContent } from '../../src/render/validate.ts';
import { SOCIAL_ICONS, SOCIAL_NETWORKS } from '../../src/render/social.ts';
import { useTestContext } from '../helpers/db.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { workspaceWithKey } from '../helpers/fixtures/workspaces.ts';
import { useServerWithKey } from '../helpers/server.ts';
import { smartFields } from './helpers.ts';

describe('GET /v1/content_schema', () => {
  const t = useTestContext();
  const api = useServerWithKey(t);
  let bareKey: string;

  beforeAll(async () => {
    for (const [i, f] of smartFields.entries())
      await insertSmartField(t.ctx.pool, api.workspaceId, { id: f.id, label: f.label, slug: f.slug, kind: f.kind, position: i });
    bareKey = (await workspaceWithKey(t.ctx, 'Globex')).key;
  });

  const get = (k?: string) => api.server.inject({ url: '/v1/content_schema', headers: k ? { authorization: `Bearer ${k}` } : {} });

  it('needs an API key', async () => {
    const r = await get();
    expect(r.statusCode).toBe(401);
    expect(r.json().error.code).toBe('unauthorized');
  });

  it('answers {data:{version, schema, enums, social_icons, example, guidance}}', async () => {
    const r = await get(api.key);
    expect(r.statusCode).toBe(200);
    const { data } = r.json();
    expect(Object.keys(data).sort()).toEqual(['enums', 'example', 'guidance', 'schema', 'social_icons', 'version']);
    expect(data.version).toBe(CONTENT_SCHEMA_VERSION);
    expect(data.guidance.procedure[0]).toMatch(/GET \/v1\/signatures/);
    expect(data.enums.block_types).toEqual(['stack', 'text', 'list', 'socialList', 'optOut', 'listItem', 'listItemLabel', 'socialListItem']);
    expect(data.enums.href_schemes).toEqual(['https:', 'http:', 'mailto:', 'tel:']);
    expect(data.enums.size_limits).toEqual({ gmail: 10_000, outlook: 30_000, outlook_owa: 8_000, slack: 10_000 });
  });

  it('serves the JSON Schema generated from the validator schema', async () => {
    const { data } = (await get(api.key)).json();
    expect(data.schema).toEqual(JSON.parse(JSON.stringify(contentTreeJsonSchema())));
    expect(data.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(data.schema.$ref).toBe('#/$defs/stack');
  });

  it("lists the workspace's smart fields, and its example uses them and passes the validator", async () => {
    const { data } = (await get(api.key)).json();
    expect(data.enums.smart_fields.map((f: { slug: string }) => f.slug)).toEqual(smartFields.map((f) => f.slug));
    const { rows } = await t.ctx.pool.query<{ id: string }>('select id from smart_fields where workspace_id = $1', [api.workspaceId]);
    const ids = new Set(rows.map((r) => r.id));
    const used = new Set<string>();
    JSON.stringify(data.example, (k, v: unknown) => {
      if (k === 'smartFieldUuid') used.add(v as string);
      return v;
    });
    expect([...used].sort()).toEqual(
      expect.arrayContaining(smartFields.filter((f) => ['first_name', 'job_title', 'phone', 'email', 'photo', 'linkedin'].includes(f.slug)).map((f) => f.id)),
    );
    expect(validateContent(data.example, { field: 'example', smartFieldIds: ids })).toMatchObject({ ok: true });
  });

  it('gives a workspace without smart fields an example that still validates', async () => {
    const { data } = (await get(bareKey)).json();
    expect(data.enums.smart_fields).toEqual([]);
    expect(JSON.stringify(data.example)).not.toContain('smartFieldUuid');
    expect(validateContent(data.example, { field: 'example', smartFieldIds: new Set() })).toMatchObject({ ok: true });
  });

  it('lists an https icon for every network, the same URLs the renderer uses', async () => {
    const { data } = (await get(api.key)).json();
    expect(Object.keys(data.social_icons)).toEqual([...SOCIAL_NETWORKS]);
    expect(data.social_icons).toEqual(SOCIAL_ICONS);
    for (const url of Object.values<string>(data.social_icons)) expect(url).toMatch(/^https:\/\/[^/]+\/.+\.png$/);
    const out = renderSignature({ tree: data.example, values: {}, signatureId: 'x' });
    const srcs = [...out.html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]);
    expect(srcs.length).toBeGreaterThan(0);
    for (const src of srcs) expect(Object.values(data.social_icons)).toContain(src);
  });
});
