/**
 * R4 hostile input (issue #10).
 *
 * - 1,000 generated invalid request bodies, spread over every operation of the OpenAPI document that
 *   takes a body: each starts from a valid body (checked valid) and gets one mutation (a wrong type,
 *   an unknown field, a huge number, nested garbage, a NUL, a lone surrogate, deep nesting, or a
 *   content tree broken on purpose). Every one must be a 422 whose details all name a field; none a
 *   500. Prints "bodies N, 422 N, 500 0".
 * - Directory values with markup, bidi overrides, NUL, 10,000 characters and lone surrogates go
 *   through the real engine from the emulated Google tenant: stored (NUL removed, lone surrogates
 *   U+FFFD, everything else as the directory has it), rendered escaped, and a second identical sync
 *   writes no row. Addresses too long for the database are reported on the run, not fatal to it.
 * - Bodies over the limit are 413 with the spec's error body.
 *
 * HOSTILE_SEED=<n> replays another sample of bodies.
 */
import { VALUE_ROWS } from '../helpers/fixtures/teammates.ts';
import http from 'node:http';
import fc from 'fast-check';
import { parse, type DefaultTreeAdapterMap } from 'parse5';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldPath } from '../../src/errors.ts';
import { BODY_LIMIT } from '../../src/api/server.ts';
import { ASSET_BODY_LIMIT } from '../../src/api/v1/assets.ts';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { validateContent } from '../../src/render/validate.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { cleanDirectoryUser } from '../../src/sync/clean.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { seedTeammate, useApi } from '../api/helpers.ts';
import { connectGoogle, mapSmartField, workspaceWithKey } from '../helpers/fixtures.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { validTree } from '../render/arbitraries.ts';
import { smartFields } from '../render/helpers.ts';

const SEED = Number(process.env.HOSTILE_SEED ?? 20_260_410);
const BODIES = 1000;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];
interface Ids {
  signature: string;
  folder: string;
  smartField: string;
  teammate: string;
  campaign: string;
  asset: string;
  experiment: string;
  arm: string;
}

/** A real 1×1 PNG, the valid upload the asset bodies start from. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Valid generated text: NUL and lone surrogates (which the render arbitraries include) made harmless, lengths kept. */
type Es2024String = string & { toWellFormed(): string };
const scrub = <T>(v: T): T =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'string' ? (x.replaceAll('\u0000', 'x') as Es2024String).toWellFormed() : x))) as T;

const fixtureIds = smartFields.map((f) => f.id);
const textFieldIds = smartFields.filter((f) => f.kind === 'text').map((f) => f.id);
// Names and labels refuse control characters (src/api/characters.ts): a valid one has none.
// eslint-disable-next-line no-control-regex
const label = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0 && !/[\x00-\x1f\x7f-\x9f]/.test(s));
const tree = validTree.map((t) => scrub(t) as unknown as Json);

/** A valid body for each operation that takes one (`method path` as in the OpenAPI document). */
function validBodies(ids: Ids): Record<string, fc.Arbitrary<Json>> {
  const variant = fc.record(
    {
      kind: fc.constantFrom('reply', 'internal'),
      draft_content: fc.option(tree, { nil: null }),
      activated: fc.boolean(),
      hidden: fc.boolean(),
      show_marketing_campaigns: fc.boolean(),
    },
    { requiredKeys: ['kind'] },
  );
  const signature = {
    name: label,
    folder_uuid: fc.constantFrom(ids.folder, null),
    draft_content: tree,
    installation_activated: fc.boolean(),
    variants: fc.uniqueArray(variant, { selector: (v) => v.kind, maxLength: 2 }),
  };
  const smartField = { label, required: fc.boolean(), default: fc.boolean(), position: fc.integer({ min: 0, max: 10_000 }) };
  const condition = fc.record(
    { smart_field_id: fc.constantFrom(...textFieldIds), operator: fc.constant('equal'), values: fc.array(label, { minLength: 1, maxLength: 3 }) },
    { requiredKeys: ['smart_field_id', 'values'] },
  );
  const campaign = {
    name: label,
    start_time: fc.constant('2031-01-01T09:00:00Z'),
    end_time: fc.constant('2031-02-01T09:00:00+02:00'),
    time_zone: fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York'),
    send_email: fc.boolean(),
    content: fc.option(tree, { nil: null }),
    smart_fields_conditions: fc.array(fc.array(condition, { minLength: 1, maxLength: 3 }), { maxLength: 3 }),
    signature_template_ids: fc.constant([ids.signature]),
  };
  const target = (id: string) => fc.record({ id: fc.constant(id), priority: fc.integer({ min: -1000, max: 1000 }) }, { requiredKeys: ['id'] });
  return {
    'post /v1/signatures': fc.record({ signature: fc.record(signature, { requiredKeys: ['name', 'draft_content'] }) }),
    'patch /v1/signatures/{id}': fc.record({ signature: fc.record(signature, { requiredKeys: [] }) }),
    'put /v1/signatures/{id}/assignments': fc.record({
      assignments: fc.record(
        { teammates: fc.array(target(ids.teammate), { maxLength: 1 }), groups: fc.constant([]), org_units: fc.constant([]) },
        { requiredKeys: [] },
      ),
    }),
    'post /v1/smart_fields': fc.record({
      smart_field: fc.record({ ...smartField, kind: fc.constantFrom('text', 'email', 'phone', 'url', 'image') }, { requiredKeys: ['label'] }),
    }),
    'patch /v1/smart_fields/{id}': fc.record({ smart_field: fc.record({ ...smartField, integration_id: fc.constant(null) }, { requiredKeys: [] }) }),
    'patch /v1/teammates/{id}': fc.record({
      teammate: fc.record({
        smart_fields: fc.uniqueArray(fc.record({ smart_field_id: fc.constantFrom(...fixtureIds), value: fc.option(label, { nil: null }) }), {
          selector: (x) => x.smart_field_id,
          maxLength: 4,
        }),
      }),
    }),
    'post /v1/folders': fc.record({ folder: fc.record({ name: fc.uuid().map((u) => `Folder ${u}`) }) }),
    'patch /v1/folders/{id}': fc.record({ folder: fc.record({ name: fc.uuid().map((u) => `Renamed ${u}`) }) }),
    'post /v1/marketing_campaigns': fc.record({ marketing_campaign: fc.record(campaign, { requiredKeys: ['name'] }) }),
    'patch /v1/marketing_campaigns/{id}': fc.record({ marketing_campaign: fc.record(campaign, { requiredKeys: [] }) }),
    'post /v1/marketing_campaigns/{id}/experiments': fc.record({
      experiment: fc.record(
        {
          name: label,
          mode: fc.constant('ab'),
          arms: fc.uniqueArray(
            fc.record({ name: label, weight: fc.double({ min: 0.01, max: 1000, noNaN: true }), content: tree }, { requiredKeys: ['name', 'content'] }),
            {
              selector: (a) => a.name.trim(),
              minLength: 2,
              maxLength: 4,
            },
          ),
          auto_promote: fc.boolean(),
          start_time: fc.constant('2031-01-01T09:00:00Z'),
          end_time: fc.constant('2031-02-01T09:00:00+02:00'),
          policy: fc.record(
            { probability_to_win: fc.constantFrom(0.9, 0.95, 0.99), min_clicks_per_arm: fc.integer({ min: 0, max: 1000 }) },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: ['name', 'mode', 'arms'] },
      ),
    }),
    'post /v1/experiments/{id}/promote': fc.record({ arm_id: fc.constant(ids.arm) }),
    'post /v1/assets': fc.record({
      asset: fc.record({ file_base64: fc.constant(PNG_BASE64), filename: fc.constant('logo.png'), name: label }, { requiredKeys: ['file_base64', 'filename'] }),
    }),
    'patch /v1/assets/{id}': fc.record({ asset: fc.record({ name: label }) }),
    'patch /v1/workspace/analytics_settings': fc.record({
      analytics_settings: fc.record(
        {
          browser_values_enabled: fc.boolean(),
          browser_value_cap: fc.double({ min: 0, max: 1e6, noNaN: true }),
          attribution_window_days: fc.integer({ min: 1, max: 365 }),
          conversions_per_click: fc.integer({ min: 1, max: 1000 }),
        },
        { requiredKeys: [] },
      ),
    }),
    'patch /v1/workspace/privacy_settings': fc.record({
      privacy_settings: fc.record(
        {
          views_tracking: fc.constantFrom('per_person', 'aggregate', 'off'),
          clicks_tracking: fc.constantFrom('per_person', 'aggregate', 'off'),
          retention_days: fc.option(fc.integer({ min: 1, max: 36500 }), { nil: null }),
        },
        { requiredKeys: [] },
      ),
    }),
    // Without properties or traits: any key or value inside those objects is valid.
    'post /v1/analytics/events': fc.record({
      event: fc.record(
        {
          name: label,
          value: fc.double({ min: -1e9, max: 1e9, noNaN: true }),
          currency: fc.constantFrom('EUR', 'USD', 'JPY'),
          event_id: fc.uuid(),
          anonymous_id: fc.uuid(),
          user_id: label,
        },
        { requiredKeys: ['name', 'currency'] },
      ),
    }),
  } as unknown as Record<string, fc.Arbitrary<Json>>;
}

function urlFor(op: string, ids: Ids): { method: string; path: string } {
  const [method, template] = op.split(' ') as [string, string];
  const id = template.startsWith('/v1/signatures')
    ? ids.signature
    : template.startsWith('/v1/smart_fields')
      ? ids.smartField
      : template.startsWith('/v1/teammates')
        ? ids.teammate
        : template.startsWith('/v1/folders')
          ? ids.folder
          : template.startsWith('/v1/assets')
            ? ids.asset
            : template.startsWith('/v1/experiments')
              ? ids.experiment
              : ids.campaign;
  return { method: method.toUpperCase(), path: template.replace('{id}', id) };
}

// ---------------------------------------------------------------------------------------------
// Mutations

interface Mutated {
  kind: string;
  /** The JSON text sent. */
  text: string;
  /** For NUL and surrogate mutations: the field the 422 must name with `invalid_characters`. */
  charactersField?: string;
}

function nodes(v: Json, path: Path = [], out: { path: Path; value: Json }[] = []): { path: Path; value: Json }[] {
  out.push({ path, value: v });
  if (Array.isArray(v)) v.forEach((x, i) => nodes(x, [...path, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) nodes(x, [...path, k], out);
  return out;
}

function setAt(body: Json, path: Path, value: Json): Json {
  if (!path.length) return value;
  const copy = structuredClone(body);
  let cur = copy as Record<string | number, Json>;
  for (const p of path.slice(0, -1)) cur = cur[p] as Record<string | number, Json>;
  cur[path.at(-1)!] = value;
  return copy;
}

function getAt(body: Json, path: Path): Json {
  let cur = body;
  for (const p of path) cur = (cur as Record<string | number, Json>)[p]!;
  return cur;
}

/** Adds (or renames to) an own enumerable key, `__proto__` included. */
function withKey(obj: Record<string, Json>, key: string, value: Json, replacing?: string): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === replacing) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  if (replacing === undefined) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}

const RAW = '\u0001raw\u0001';
const serialize = (body: Json, raw?: string) => (raw === undefined ? JSON.stringify(body) : JSON.stringify(body).replace(JSON.stringify(RAW), () => raw));
const typeOf = (v: Json) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const WRONG: Record<string, Json[]> = {
  string: [123, true, ['x'], { a: 1 }],
  number: ['12', false, [1], { n: 1 }],
  boolean: ['true', 0, [true], { b: true }],
  object: ['x', 1, true, [1]],
  array: ['x', 1, true, { a: [] }],
  null: ['x', 1, true, [1], { a: 1 }],
};
const HUGE = ['1e308', '-1e308', '1e400', '-1e400', '9007199254740993', '123456789012345678901234567890', '1.7976931348623157e309'];
const BAD_CHARS = { nul: ['\u0000', 'a\u0000b', '\u0000\u0000'], surrogate: ['\ud800', '\udbff', '\udc00', '\udfff', '\udc00\ud800', 'x\ud83d'] };

const leafText = (n: number) => 'x'.repeat(n);
const textBlock = (value: string) => ({ type: 'text', tokens: [{ type: 'textToken', value }] });
function nest(depth: number): Json {
  let t: Json = { type: 'stack', children: [textBlock('deep')] };
  for (let i = 1; i < depth; i++) t = { type: 'stack', children: [t] };
  return t;
}

/** Content trees broken on purpose, each in a way the validator must refuse. */
const TREE_BREAKERS: [string, (t: Record<string, Json>) => Json][] = [
  ['root is not a stack', (t) => ({ ...t, type: 'text' })],
  ['nested deeper than allowed', () => nest(12)],
  ['too many children', (t) => ({ ...t, children: Array.from({ length: 51 }, () => textBlock('x')) })],
  [
    'too many blocks',
    (t) => ({ ...t, children: Array.from({ length: 50 }, () => ({ type: 'stack', children: Array.from({ length: 10 }, () => textBlock('x')) })) }),
  ],
  ['literal too long', (t) => ({ ...t, children: [textBlock(leafText(2001))] })],
  ['javascript: link', (t) => ({ ...t, children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'x', href: { text: 'javascript:alert(1)' } }] }] })],
  [
    'unknown smart field',
    (t) => ({ ...t, children: [{ type: 'text', tokens: [{ type: 'textToken', smartFieldUuid: '00000000-0000-4000-8000-00000000dead' }] }] }),
  ],
  ['font size out of range', (t) => ({ ...t, children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'x', textStyle: { fontSize: 73 } }] }] })],
  [
    'CSS injection in a colour',
    (t) => ({
      ...t,
      children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'x', textStyle: { color: 'red;background:url(javascript:alert(1))' } }] }],
    }),
  ],
  ['stack without children', () => ({ type: 'stack' })],
  ['unknown block type', (t) => ({ ...t, children: [{ type: 'script', tokens: [{ type: 'textToken', value: 'alert(1)' }] }] })],
  ['token with neither value nor field', (t) => ({ ...t, children: [{ type: 'text', tokens: [{ type: 'textToken' }] }] })],
  ['empty tokens', (t) => ({ ...t, children: [{ type: 'text', tokens: [] }] })],
  ['array for a tree', () => [{ type: 'stack', children: [] }]],
];

function mutation(body: Json): fc.Arbitrary<Mutated> {
  const all = nodes(body);
  const objects = all.filter((n) => typeOf(n.value) === 'object');
  const strings = all.filter((n) => typeof n.value === 'string');
  const keyed = objects.flatMap((n) => Object.keys(n.value as object).map((key) => ({ path: n.path, key })));
  const trees = all.filter((n) => (n.path.at(-1) === 'draft_content' || n.path.at(-1) === 'content') && typeOf(n.value) === 'object');
  const node = fc.constantFrom(...all);

  const wrongType = node.chain((n) =>
    fc.constantFrom(...WRONG[typeOf(n.value)]!).map((v) => ({ kind: 'wrong type', text: serialize(setAt(body, n.path, v)) })),
  );
  const unknownField = fc
    .tuple(
      fc.constantFrom(...objects),
      fc.oneof(
        fc.constantFrom('colour', 'extra', 'constructor', '__proto__', 'toString', ''),
        fc.string().map((s) => `x_${s}`),
      ),
      fc.jsonValue(),
    )
    .map(([n, key, v]) => ({ kind: 'unknown field', text: serialize(setAt(body, n.path, withKey(n.value as Record<string, Json>, key, v as Json))) }));
  const huge = fc.tuple(node, fc.constantFrom(...HUGE)).map(([n, raw]) => ({ kind: 'huge number', text: serialize(setAt(body, n.path, RAW), raw) }));
  const garbage = fc
    .tuple(
      node,
      fc.jsonValue({ maxDepth: 6 }).filter((v) => typeof v === 'object' && v !== null && !(Array.isArray(v) && v.length === 0) && Object.keys(v).length > 0),
    )
    .filter(([n, v]) => typeOf(n.value) !== typeOf(v as Json))
    .map(([n, v]) => ({ kind: 'nested garbage', text: serialize(setAt(body, n.path, v as Json)) }));
  const inKey = (kind: 'nul' | 'surrogate') =>
    fc.tuple(fc.constantFrom(...keyed), fc.constantFrom(...BAD_CHARS[kind])).map(([k, bad]) => {
      const obj = getAt(body, k.path) as Record<string, Json>;
      const key = `${k.key}${bad}`;
      return {
        kind: `${kind} in a field name`,
        text: serialize(setAt(body, k.path, withKey(obj, key, obj[k.key]!, k.key))),
        charactersField: fieldPath([...k.path, key]),
      };
    });
  const characters = (kind: 'nul' | 'surrogate') => {
    if (!strings.length) return inKey(kind);
    const inValue = fc.tuple(fc.constantFrom(...strings), fc.constantFrom(...BAD_CHARS[kind]), fc.nat()).map(([n, bad, at]) => {
      const s = n.value as string;
      const i = at % (s.length + 1);
      return { kind, text: serialize(setAt(body, n.path, s.slice(0, i) + bad + s.slice(i))), charactersField: fieldPath(n.path) || 'body' };
    });
    return fc.oneof({ weight: 3, arbitrary: inValue }, { weight: 1, arbitrary: inKey(kind) });
  };
  const deep = fc.tuple(node, fc.integer({ min: 1000, max: 100_000 }), fc.boolean()).map(([n, depth, arrays]) => ({
    kind: 'deep nesting',
    text: serialize(setAt(body, n.path, RAW), arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '0' + '}'.repeat(depth)),
  }));
  const brokenTree = trees.length
    ? fc
        .tuple(fc.constantFrom(...trees), fc.constantFrom(...TREE_BREAKERS))
        .map(([n, [, brk]]) => ({ kind: 'invalid content tree', text: serialize(setAt(body, n.path, brk(n.value as Record<string, Json>))) }))
    : wrongType;
  return fc.oneof(wrongType, unknownField, huge, garbage, characters('nul'), characters('surrogate'), deep, { weight: 4, arbitrary: brokenTree });
}

// ---------------------------------------------------------------------------------------------

type Element = DefaultTreeAdapterMap['element'];
type Node = DefaultTreeAdapterMap['node'];
const ALLOWED_ELEMENTS = new Set(['table', 'tbody', 'tr', 'td', 'span', 'a', 'img', 'br']);

function parseHtml(html: string): { elements: Element[]; text: string; errors: string[] } {
  const errors: string[] = [];
  const doc = parse(`<!DOCTYPE html><html><head><title>t</title></head><body>${html}</body></html>`, { onParseError: (e) => errors.push(e.code) });
  const body = (doc.childNodes.find((n) => n.nodeName === 'html') as Element).childNodes.find((n) => n.nodeName === 'body') as Element;
  const elements: Element[] = [];
  let text = '';
  const walk = (n: Node) => {
    if (n.nodeName === '#text') text += (n as DefaultTreeAdapterMap['textNode']).value;
    if ('tagName' in n) elements.push(n);
    if ('childNodes' in n) n.childNodes.forEach(walk);
  };
  body.childNodes.forEach(walk);
  return { elements, text, errors };
}

describe('R4 hostile input', () => {
  // A thousand bodies on one key within seconds: over the default RATE_LIMIT_API, which limits.test.ts covers.
  const api = useApi({ RATE_LIMIT_API: '0' });
  const ids = {} as Ids;

  beforeAll(async () => {
    const pool = api.t.ctx.pool;
    for (const f of smartFields) {
      await insertSmartField(pool, api.ws, { id: f.id, label: f.label, slug: f.slug, kind: f.kind });
    }
    const ok = (r: { status: number; text: string }) => {
      expect(r.status, r.text).toBe(201);
      return (r as unknown as { body: { data: { id: string } } }).body.data.id;
    };
    await setEventTracking(pool, api.ws, true);
    ids.folder = ok(await api.call('POST', '/v1/folders', { folder: { name: 'Hostile' } }));
    ids.signature = ok(
      await api.call('POST', '/v1/signatures', { signature: { name: 'Base', draft_content: { type: 'stack', children: [textBlock('Hi')] } } }),
    );
    ids.smartField = ok(await api.call('POST', '/v1/smart_fields', { smart_field: { label: 'Extra' } }));
    ids.campaign = ok(await api.call('POST', '/v1/marketing_campaigns', { marketing_campaign: { name: 'Base' } }));
    const experiment = await api.call('POST', `/v1/marketing_campaigns/${ids.campaign}/experiments`, {
      experiment: {
        name: 'Base',
        mode: 'ab',
        arms: [
          { name: 'A', content: { type: 'stack', children: [textBlock('A')] } },
          { name: 'B', content: { type: 'stack', children: [textBlock('B')] } },
        ],
      },
    });
    ids.experiment = ok(experiment);
    ids.arm = (experiment.body as { data: { arms: { id: string }[] } }).data.arms[1]!.id;
    expect((await api.call('POST', `/v1/experiments/${ids.experiment}/start`)).status).toBe(200);
    ids.teammate = (await seedTeammate(pool, api.ws, 'Hostile Person')).id;
    ids.asset = ok(
      await api.call('POST', '/v1/assets', {
        asset: { file_base64: Buffer.concat([Buffer.from(PNG_BASE64, 'base64'), Buffer.from('hostile')]).toString('base64'), filename: 'base.png' },
      }),
    );
  });

  async function bodyOperations(): Promise<string[]> {
    const doc = (await api.call('GET', '/v1/openapi.json', undefined, null)).body as { paths: Record<string, Record<string, { requestBody?: unknown }>> };
    return Object.entries(doc.paths)
      .flatMap(([path, methods]) =>
        Object.entries(methods)
          .filter(([, op]) => op.requestBody)
          .map(([m]) => `${m} ${path}`),
      )
      .sort();
  }

  it('the generators cover every operation with a body, and their bases are valid', async () => {
    const bodies = validBodies(ids);
    expect(Object.keys(bodies).sort()).toEqual(await bodyOperations());
    for (const t of fc.sample(tree, { numRuns: 200, seed: SEED })) {
      const r = validateContent(t, { field: 'tree', smartFieldIds: new Set(fixtureIds) });
      expect(r.ok, JSON.stringify(r.ok ? null : r.details.slice(0, 3))).toBe(true);
    }
    for (const [op, arb] of Object.entries(bodies)) {
      for (const body of fc.sample(arb, { numRuns: 3, seed: SEED })) {
        const { method, path } = urlFor(op, ids);
        const r = await api.call(method, path, body);
        expect([200, 201], `${op}: ${r.text.slice(0, 500)}`).toContain(r.status);
      }
    }
    for (const [name, brk] of TREE_BREAKERS) {
      expect(validateContent(brk({ type: 'stack', children: [textBlock('x')] }), { field: 'tree', smartFieldIds: new Set(fixtureIds) }).ok, name).toBe(false);
    }
  });

  it(`${BODIES} generated invalid bodies and content trees get 422 with a field on every detail, never a 500`, async () => {
    const bodies = validBodies(ids);
    const ops = Object.keys(bodies);
    const cases = fc.sample(
      fc.constantFrom(...ops).chain((op) => bodies[op]!.chain((body) => mutation(body).map((m) => ({ op, ...m })))),
      { numRuns: BODIES, seed: SEED },
    );
    const statuses = new Map<number, number>();
    const kinds = new Map<string, number>();
    const failures: string[] = [];
    let trees = 0;
    const send = async (c: (typeof cases)[number]) => {
      const { method, path } = urlFor(c.op, ids);
      const r = await api.raw(method, path, c.text);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
      if (c.kind === 'invalid content tree') trees++;
      const body = r.body as { details?: { field?: unknown; code?: unknown }[]; remediation?: { action?: unknown } } | null;
      const details = body?.details;
      // The spec's other 422: an error with remediation (a well-typed value that names nothing connected,
      // e.g. a string where the valid body had null, as an integration id) says what to do instead of a field.
      const remediation = typeof body?.remediation?.action === 'string' && c.charactersField === undefined;
      const problem =
        r.status !== 422
          ? `status ${r.status}`
          : remediation
            ? undefined
            : !Array.isArray(details) || !details.length
              ? 'no details'
              : !details.every((d) => typeof d.field === 'string' && d.field.length > 0)
                ? 'a detail without field'
                : c.charactersField !== undefined && !details.some((d) => d.code === 'invalid_characters' && d.field === c.charactersField)
                  ? `no invalid_characters detail on ${c.charactersField}`
                  : undefined;
      if (problem) failures.push(`${c.op} [${c.kind}] ${problem}: sent ${c.text.slice(0, 300)} -> ${r.text.slice(0, 300)}`);
    };
    for (let i = 0; i < cases.length; i += 8) await Promise.all(cases.slice(i, i + 8).map(send));

    const n422 = statuses.get(422) ?? 0;
    const n500 = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);
    console.log(
      `R4 hostile bodies (seed ${SEED}): bodies ${cases.length}, 422 ${n422}, 500 ${n500}; content trees ${trees}; ${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
    expect(failures.slice(0, 10)).toEqual([]);
    expect(n500).toBe(0);
    expect(n422).toBe(BODIES);
    expect(new Set(cases.map((c) => c.op))).toEqual(new Set(ops));
  });

  it('a NUL or a lone surrogate is a 422 naming the field, in plain fields and inside content trees alike', async () => {
    const nul = await api.call('POST', '/v1/folders', { folder: { name: 'Evil\u0000Folder' } });
    expect(nul.status).toBe(422);
    expect(nul.body.details).toEqual([expect.objectContaining({ field: 'folder.name', code: 'invalid_characters' })]);
    const lone = await api.call('PATCH', `/v1/signatures/${ids.signature}`, {
      signature: { draft_content: { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Hi \ud800' }] }] } },
    });
    expect(lone.status).toBe(422);
    expect(lone.body.details).toEqual([expect.objectContaining({ field: 'signature.draft_content.children[0].tokens[0].value', code: 'invalid_characters' })]);
    const both = await api.call('PATCH', `/v1/teammates/${ids.teammate}`, {
      teammate: { smart_fields: [{ smart_field_id: fixtureIds[0], value: 'a\u0000' }], ['x\udfff']: 1 },
    });
    expect(both.status).toBe(422);
    expect(both.body.details.map((d: { field: string; code: string }) => `${d.field} ${d.code}`).sort()).toEqual(
      ['teammate.smart_fields[0].value invalid_characters', 'teammate["x\\udfff"] invalid_characters', 'teammate["x\\udfff"] unknown_field'].sort(),
    );
    // Nothing was written.
    expect((await api.t.ctx.pool.query(`select count(*)::int as n from folders where name like 'Evil%'`)).rows[0].n).toBe(0);
  });

  describe('oversized bodies', () => {
    it('a body over the limit is 413 with the spec error body, on every write', async () => {
      const pad = ' '.repeat(BODY_LIMIT);
      for (const op of await bodyOperations()) {
        const { method, path } = urlFor(op, ids);
        // Uploads take a larger body: room for a 5 MiB file in base64.
        const limit = op === 'post /v1/assets' ? ASSET_BODY_LIMIT : BODY_LIMIT;
        const r = await api.raw(method, path, `{"x": 1${limit === BODY_LIMIT ? pad : ' '.repeat(limit)}}`);
        expect(r.status, op).toBe(413);
        expect(r.body).toEqual({ error: { type: 'invalid_request_error', code: 'body_too_large', message: `Request bodies are limited to ${limit} bytes.` } });
      }
    });

    it('the limit is exact, and a chunked body without a length is cut off at it too', async () => {
      const body = JSON.stringify({ folder: { name: 'At the limit' } });
      const exact = await api.raw('POST', '/v1/folders', body + ' '.repeat(BODY_LIMIT - Buffer.byteLength(body)));
      expect(exact.status).toBe(201);
      const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(
          `${api.base}/v1/folders`,
          { method: 'POST', headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
          (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body: text }));
          },
        );
        req.on('error', reject);
        req.write('{"folder": {"name": "');
        const chunk = 'x'.repeat(64 * 1024);
        for (let sent = 0; sent <= BODY_LIMIT; sent += chunk.length) req.write(chunk);
        req.end('"}}');
      });
      expect(chunked.status).toBe(413);
      expect(JSON.parse(chunked.body).error.code).toBe('body_too_large');
    });
  });

  describe('directory values', () => {
    let google: GoogleEmulator;
    beforeAll(async () => {
      google = await startGoogleEmulator(generateGoogleTenant(0));
    });
    afterAll(() => google.close());

    const HTML = '<script>alert(1)</script><img src=x onerror=alert(1)>';
    const ATTR = "\"><svg onload=alert(1)> & 'quotes'";
    const RTL = '\u202Egnp.exe\u202C Admin';
    const LONG = 'L'.repeat(10_000);

    it('markup, bidi overrides, NUL, 10,000 characters and lone surrogates are stored safely, rendered escaped, and a second sync writes nothing', async () => {
      const { ctx } = api.t;
      const tenant = generateGoogleTenant(6);
      const [u0, u1, u2, u3] = tenant.users as [
        (typeof tenant.users)[number],
        (typeof tenant.users)[number],
        (typeof tenant.users)[number],
        (typeof tenant.users)[number],
      ];
      u0.name = { givenName: HTML, familyName: ATTR, fullName: HTML };
      u0.organizations = [{ title: ATTR, department: RTL, primary: true }];
      u1.name = { givenName: 'Ann\u0000a', familyName: 'Null', fullName: 'Ann\u0000a Null' };
      u1.organizations = [{ title: 'CTO\u0000', department: '\u0000', primary: true }];
      u1.phones = [{ value: '+1 555\u0000 0100', type: 'work' }];
      u1.aliases = ['nul\u0000alias@example.test'];
      u2.name = { givenName: 'Long', familyName: 'Value', fullName: 'Long Value' };
      u2.organizations = [{ title: LONG, department: 'D'.repeat(10_000), primary: true }];
      u3.name = { givenName: 'Lone \ud800', familyName: 'X\udc00', fullName: 'Lone \ud800 and \udfff' };
      u3.organizations = [{ title: '\udc00\ud800', department: 'Dept \ud83d', primary: true }];
      tenant.users[4]!.aliases = [`${'a'.repeat(400)}@example.test`, 'two words@example.test', 'fine@example.test'];
      tenant.users[5]!.primaryEmail = `${'p'.repeat(10_000)}@example.test`;
      tenant.groups[0]!.name = 'Sales\u0000 <b>team</b> \ud800';
      Object.assign(google.tenant, tenant);

      const { workspaceId, key } = await workspaceWithKey(ctx, 'Directory');
      const integration = await connectGoogle(ctx, workspaceId, google.url);
      const field = (slug: string, attribute: string) => mapSmartField(ctx, workspaceId, slug, integration.id, attribute);
      const f = {
        name: await field('full_name', 'name.fullName'),
        title: await field('job_title', 'organizations.primary.title'),
        department: await field('department', 'organizations.primary.department'),
        phone: await field('phone', 'phones.work'),
      };
      const sync = async () => {
        const [run] = await startRuns(ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
        return (await executeRun(ctx, run!.id, { retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 10 } }))!;
      };

      // Stored: NUL removed, lone surrogates U+FFFD, everything else exactly as the directory has it.
      const person = async (email: string) => {
        const { rows } = await ctx.pool.query<{
          id: string;
          display_name: string;
          given_name: string;
          family_name: string;
          values: Record<string, string>;
          emails: string[];
        }>(
          `select t.id, t.display_name, t.given_name, t.family_name,
                  coalesce((select jsonb_object_agg(v.smart_field_id, v.value) from ${VALUE_ROWS} v where v.teammate_id = t.id), '{}') as values,
                  (select array_agg(e.address order by e.address) from emails e where e.teammate_id = t.id) as emails
             from teammates t where t.id = (select teammate_id from emails where workspace_id = $1 and address = $2)`,
          [workspaceId, email],
        );
        return rows[0]!;
      };
      const first = await sync();
      // Addresses the database cannot hold are reported on the run and left out, instead of failing it.
      expect(first, first.error ?? '').toMatchObject({ status: 'succeeded', created: 5, errors: 3 });
      expect(first.error_details.map((d) => d.message)).toEqual([
        expect.stringMatching(/^alias a{100}… is not a single address of at most 320 characters; not added$/),
        'alias two words@example.test is not a single address of at most 320 characters; not added',
        expect.stringMatching(/^email p{100}… is not a single address of at most 320 characters; skipped$/),
      ]);
      expect((await person(tenant.users[4]!.primaryEmail)).emails).toEqual(['fine@example.test', tenant.users[4]!.primaryEmail]);

      const p0 = await person(u0.primaryEmail);
      expect(p0).toMatchObject({ display_name: HTML, given_name: HTML, family_name: ATTR, values: { [f.name]: HTML, [f.title]: ATTR, [f.department]: RTL } });
      const p1 = await person(u1.primaryEmail);
      expect(p1).toMatchObject({
        display_name: 'Anna Null',
        given_name: 'Anna',
        values: { [f.name]: 'Anna Null', [f.title]: 'CTO', [f.phone]: '+1 555 0100' },
      });
      expect(p1.values[f.department]).toBeUndefined(); // a value that was only a NUL is no value
      expect(p1.emails).toEqual(['nulalias@example.test', u1.primaryEmail]);
      const p2 = await person(u2.primaryEmail);
      expect(p2.values[f.title]).toBe(LONG);
      expect(p2.values[f.department]).toHaveLength(10_000);
      const p3 = await person(u3.primaryEmail);
      expect(p3).toMatchObject({
        display_name: 'Lone \ufffd and \ufffd',
        given_name: 'Lone \ufffd',
        family_name: 'X\ufffd',
        values: { [f.title]: '\ufffd\ufffd', [f.department]: 'Dept \ufffd' },
      });
      const group = await ctx.pool.query(`select name from groups where integration_id = $1 and external_id = 'group-0'`, [integration.id]);
      expect(group.rows[0].name).toBe('Sales <b>team</b> \ufffd');

      // The API answers them as JSON data.
      const listed = await api.call('GET', '/v1/teammates?per_page=100', undefined, key);
      expect(listed.status).toBe(200);
      expect(listed.body.data.map((t: { display_name: string }) => t.display_name)).toEqual(
        expect.arrayContaining([HTML, 'Anna Null', 'Lone \ufffd and \ufffd']),
      );

      // Rendered: every value escaped, no element or attribute from a value, bidi overrides gone.
      const tree = {
        type: 'stack',
        children: [
          { type: 'text', tokens: [{ type: 'textToken', smartFieldUuid: f.name }] },
          {
            type: 'text',
            tokens: [
              {
                type: 'textToken',
                smartFieldUuid: f.title,
                href: { text: 'https://acme.example/people', queryParams: [{ key: 'title', values: [{ smartFieldUuid: f.title }] }] },
              },
            ],
          },
          { type: 'text', tokens: [{ type: 'textToken', smartFieldUuid: f.department }] },
          { type: 'text', tokens: [{ type: 'textToken', smartFieldUuid: f.phone, href: { text: 'tel:', smartFieldUuid: f.phone } }] },
        ],
      };
      expect(validateContent(tree, { field: 'tree', smartFieldIds: new Set(Object.values(f)) }).ok).toBe(true);
      const signatureId = await insertSignature(ctx.pool, workspaceId, { name: 'Hostile', draftContent: tree, published: true });
      const render = async (teammateId: string) => {
        const r = await renderForAddress(ctx, { workspaceId, teammateId, signatureId, kind: 'primary' });
        const parsed = parseHtml(r.html);
        expect(parsed.errors).toEqual([]);
        expect(parsed.elements.map((e) => e.tagName).filter((t) => !ALLOWED_ELEMENTS.has(t))).toEqual([]);
        for (const e of parsed.elements) {
          expect(e.attrs.filter((a) => /^on/i.test(a.name))).toEqual([]);
          if (e.tagName === 'a')
            expect(e.attrs.find((a) => a.name === 'href')!.value).toMatch(/^(?:https:\/\/acme\.example\/people(?:\?title=[^\s<>"]*)?|tel:[^\s<>"]*)$/);
        }
        expect(r.html).toMatch(/^[\x20-\x7e\n]*$/); // plain ASCII: every non-ASCII character a numeric reference
        return { html: r.html, text: parsed.text, plain: r.text };
      };
      const r0 = await render(p0.id);
      expect(r0.html).not.toMatch(/<script|<img|<svg/i);
      expect(r0.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(r0.text).toContain(HTML);
      expect(r0.text).toContain(ATTR);
      expect(r0.text).toContain('gnp.exe Admin');
      expect(r0.text).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
      expect(r0.plain).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
      const r1 = await render(p1.id);
      expect(r1.text).toContain('Anna Null');
      expect(r1.html.includes('\u0000') || r1.html.includes('&#0;')).toBe(false);
      const r2 = await render(p2.id);
      expect(r2.text).toContain(LONG);
      const r3 = await render(p3.id);
      expect(r3.text).toContain('Lone \ufffd and \ufffd');
      expect(r3.html).toContain('&#65533;');

      // A second identical sync: every row of the workspace keeps its version (xmin), no event.
      const versions = async () =>
        (
          await ctx.pool.query(
            `select (select json_agg(xmin::text order by id) from teammates where workspace_id = $1) as teammates,
                    (select json_agg(xmin::text order by id) from emails where workspace_id = $1) as emails,
                    (select json_agg(xmin::text order by external_id) from teammate_sources where workspace_id = $1) as sources,
                    (select json_agg(xmin::text order by id) from groups where workspace_id = $1) as groups,
                    (select count(*)::int from events where workspace_id = $1) as events`,
            [workspaceId],
          )
        ).rows[0];
      const before = await versions();
      const second = await sync();
      expect(second).toMatchObject({ status: 'succeeded', created: 0, updated: 0, unchanged: 5, deleted: 0, errors: 3 });
      expect(await versions()).toEqual(before);
    });

    it('the cleaning covers every text of a directory user', () => {
      const dirty = 'a\u0000b\ud800';
      const cleaned = cleanDirectoryUser({
        externalId: dirty,
        primaryEmail: dirty,
        aliases: [dirty],
        givenName: dirty,
        familyName: dirty,
        displayName: dirty,
        removed: false,
        attributes: { [dirty]: dirty },
        groups: [dirty],
        orgUnits: [dirty],
        photo: { url: dirty, etag: dirty },
      });
      const strings = JSON.stringify(cleaned);
      expect(strings).not.toMatch(/\\u0000|\\ud800/);
      expect(cleaned.displayName).toBe('ab\ufffd');
      expect(Object.keys(cleaned.attributes)).toEqual(['ab\ufffd']);
    });
  });
});
