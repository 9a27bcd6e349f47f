/**
 * The HTTP API as tests start it: the server `sigsync api` runs (`buildServer`) on a test
 * context, listening on a free loopback port, and its answers read as JSON.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { buildServer, type BuildOptions } from '../../src/api/server.ts';
import type { AppContext } from '../../src/context.ts';
import { workspaceWithKey } from './fixtures/workspaces.ts';

/** The API server listening on 127.0.0.1 at a free port; `base` is its address (`http://127.0.0.1:PORT`). */
export async function startServer(ctx: AppContext, opts: BuildOptions = {}): Promise<{ server: FastifyInstance; base: string }> {
  const server = await buildServer(ctx, opts);
  const base = await server.listen({ host: '127.0.0.1', port: 0 });
  return { server, base };
}

/** An HTTP answer: its status, its body parsed as JSON (null when empty or not JSON) and as text. */
export interface Res {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

export async function readAnswer(r: Response): Promise<Res> {
  const text = await r.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  return { status: r.status, body, text };
}

/**
 * For the describe block it is called in: the API server on `t.ctx` (tests `inject` into it, it
 * does not listen) and a workspace "Acme" with an API key, made before the block's tests and the
 * server closed after them. The fields are set once the block's `beforeAll` has run.
 */
export function useServerWithKey(t: { ctx: AppContext }): { server: FastifyInstance; workspaceId: string; key: string } {
  const s = {} as { server: FastifyInstance; workspaceId: string; key: string };
  beforeAll(async () => {
    s.server = await buildServer(t.ctx);
    Object.assign(s, await workspaceWithKey(t.ctx));
  });
  afterAll(() => s.server?.close());
  return s;
}
