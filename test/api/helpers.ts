/**
 * HTTP-level API tests: a real server listening on loopback, two workspaces (the caller's and a
 * foreign one) each with an API key, and seed helpers for rows the API does not create.
 */
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { ServerRoutes } from '../../src/api/server.ts';
import { useTestContext, type TestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures/workspaces.ts';
import { readAnswer, startServer, type Res } from '../helpers/server.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertGroup, insertTeammate, type EmailFixture } from '../helpers/fixtures/teammates.ts';

export type { Res };

export interface Api {
  t: TestContext;
  base: string;
  /** The caller's workspace and key. */
  ws: string;
  key: string;
  /** Another workspace, for "foreign id" checks. */
  otherWs: string;
  otherKey: string;
  call(method: string, path: string, body?: unknown, key?: string | null): Promise<Res>;
  /** A request whose body is sent as given (a string), with a JSON content type. */
  raw(method: string, path: string, body: string): Promise<Res>;
}

export function useApi(configOverrides: Record<string, string> = {}, opts: { routes?: ServerRoutes[] } = {}): Api {
  const t = useTestContext(configOverrides);
  let server: FastifyInstance;
  const api = { t } as Api;

  async function send(method: string, path: string, init: { body?: string; key: string | null }): Promise<Res> {
    const headers: Record<string, string> = {};
    if (init.key) headers.authorization = `Bearer ${init.key}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    return readAnswer(await fetch(`${api.base}${path}`, { method, headers, body: init.body }));
  }

  api.call = (method, path, body, key) =>
    send(method, path, { body: body === undefined ? undefined : JSON.stringify(body), key: key === undefined ? api.key : key });
  api.raw = (method, path, body) => send(method, path, { body, key: api.key });

  beforeAll(async () => {
    ({ server, base: api.base } = await startServer(t.ctx, { routes: opts.routes ?? [] }));
    ({ workspaceId: api.ws, key: api.key } = await workspaceWithKey(t.ctx, 'Acme'));
    ({ workspaceId: api.otherWs, key: api.otherKey } = await workspaceWithKey(t.ctx, 'Other'));
  });
  afterAll(async () => {
    await server?.close();
  });
  return api;
}

/** A small valid content tree; with a smart field id, one token resolves to it. */
export function tree(text = 'Hello', smartFieldId?: string) {
  return {
    type: 'stack',
    children: [
      {
        type: 'text',
        tokens: [{ type: 'textToken', value: text }, ...(smartFieldId ? [{ type: 'textToken', value: 'Title', smartFieldUuid: smartFieldId }] : [])],
      },
    ],
  };
}

/** Shorthands over the fixture modules for the API tests' usual rows. */
export async function seedIntegration(
  pool: pg.Pool,
  ws: string,
  opts: {
    category?: 'teammates' | 'signatures' | 'smart_fields' | 'assets';
    status?: 'active' | 'access_lost' | 'disconnected';
    kind?: 'google_workspace' | 'microsoft_entra' | 'slack';
    name?: string;
  } = {},
): Promise<string> {
  return insertIntegrationRow(pool, ws, { kind: opts.kind, category: opts.category, name: opts.name, status: opts.status });
}

export async function seedTeammate(
  pool: pg.Pool,
  ws: string,
  name: string,
  emails: EmailFixture[] = [{ address: `${name.toLowerCase().replace(/\W+/g, '.')}@acme.test`, primary: true }],
): Promise<{ id: string; emailIds: string[] }> {
  return insertTeammate(pool, ws, { displayName: name, emails });
}

export async function seedGroup(
  pool: pg.Pool,
  ws: string,
  integrationId: string,
  kind: 'group' | 'org_unit',
  name: string,
  members: string[] = [],
): Promise<string> {
  return insertGroup(pool, ws, { integrationId, kind, name, members });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function eventsOf(pool: pg.Pool, ws: string, type?: string): Promise<{ type: string; payload: any }[]> {
  const { rows } = await pool.query(
    `select type, payload from events where workspace_id = $1 and ($2::text is null or type = $2) order by occurred_at, created_at, id`,
    [ws, type ?? null],
  );
  return rows;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function jobsOf(pool: pg.Pool, task: string): Promise<{ payload: any; key: string | null }[]> {
  const { rows } = await pool.query(
    `select p.payload, j.key from graphile_worker.jobs j join graphile_worker._private_jobs p on p.id = j.id where j.task_identifier = $1 order by j.id`,
    [task],
  );
  return rows;
}

export async function clearJobs(pool: pg.Pool): Promise<void> {
  await pool.query('delete from graphile_worker._private_jobs');
}

export const FOREIGN_UUID = '00000000-0000-4000-8000-000000000000';

/** Spec section 4, all 41 endpoints, as `method path`. */
export const SPEC_SECTION_4 = [
  'get /v1/analytics/overview',
  'get /v1/analytics/campaigns',
  'get /v1/analytics/countries',
  'get /v1/analytics/signatures',
  'get /v1/analytics/teammates',
  'get /v1/anchors',
  'get /v1/anchors/{anchor_uuid}/analytics',
  'get /v1/analytics/visitors',
  'get /v1/analytics/visitors/{visitor_id}',
  'get /v1/analytics/events',
  'post /v1/analytics/events',
  'get /v1/signatures',
  'post /v1/signatures',
  'patch /v1/signatures/{id}',
  'post /v1/signatures/{id}/publish',
  'post /v1/signatures/{id}/install',
  'post /v1/signatures/{signature_id}/variants/{kind}/publish',
  'get /v1/smart_fields',
  'post /v1/smart_fields',
  'patch /v1/smart_fields/{id}',
  'get /v1/teammates',
  'patch /v1/teammates/{id}',
  'delete /v1/teammates/{id}',
  'delete /v1/emails/{id}',
  'post /v1/assets',
  'patch /v1/assets/{id}',
  'get /v1/folders',
  'post /v1/folders',
  'patch /v1/folders/{id}',
  'delete /v1/folders/{id}',
  'get /v1/marketing_campaigns',
  'post /v1/marketing_campaigns',
  'patch /v1/marketing_campaigns/{id}',
  'post /v1/marketing_campaigns/{id}/schedule',
  'post /v1/marketing_campaigns/{id}/pause',
  'post /v1/marketing_campaigns/{id}/resume',
  'get /v1/integrations',
  'post /v1/integrations/sync',
  'get /v1/financial_documents',
  'get /v1/workspace',
  'get /v1/content_schema',
];
