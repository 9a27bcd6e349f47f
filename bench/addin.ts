/**
 * `addin`: 100 concurrent composers (bench/addinClient.ts, its own process) fetch signatures from the
 * Outlook add-in route as fast as they can, half of the fetches revalidating with If-None-Match (so
 * 200 and 304 mix), and, on the same server in the same run, a bare route that answers a fixed JSON
 * body with an ETag and nothing else. Goals: p99 ≤ 50 ms, and add-in throughput ≥ 0.5 × the bare
 * route's.
 *
 *   npm run bench -- addin [--seconds 10] [--connections 100] [--addresses 500]
 *
 * Key-only mode (an add-in key), the production render cache (ADDIN_CACHE_SECONDS 10), the rate limit
 * off (every composer shares the key). The routes run in alternating rounds of about 2 s. Reports
 * requests/s, p50/p99 (the median of the rounds'), the 200/304 mix, and CPU seconds of the server,
 * the client process and Postgres for the add-in rounds.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../src/api/server.ts';
import type { AppContext } from '../src/context.ts';
import { createApiKey } from '../src/db/apiKeys.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb } from './support.ts';
import { median, round } from './stats.ts';

interface ClientResult {
  requests: number;
  ok200: number;
  ok304: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
  cpu_s: number;
}

function runClient(args: { base: string; paths: string[]; key: string; connections: number; seconds: number }): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'addinClient.ts'), JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as ClientResult) : reject(new Error(`add-in client exited with ${code}`))));
  });
}

const sum = (rs: ClientResult[]) => ({
  requests: rs.reduce((n, r) => n + r.requests, 0),
  ok200: rs.reduce((n, r) => n + r.ok200, 0),
  ok304: rs.reduce((n, r) => n + r.ok304, 0),
  errors: rs.reduce((n, r) => n + r.errors, 0),
  p50_ms: median(rs.map((r) => r.p50_ms)),
  p99_ms: median(rs.map((r) => r.p99_ms)),
  client_cpu_s: rs.reduce((n, r) => n + r.cpu_s, 0),
});

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/** A workspace of `n` teammates sharing one published signature, and an add-in key. */
async function seed(ctx: AppContext, n: number): Promise<{ key: string; addresses: string[] }> {
  const ws = await createWorkspace(ctx.pool, 'addin');
  const content = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Kind regards from Acme' }] }] };
  const sig = (await ctx.pool.query<{ id: string }>(`insert into signatures (workspace_id, name, draft_content, content, last_published_at) values ($1, 'Std', $2, $2, now()) returning id`, [ws.id, content])).rows[0]!.id;
  const { rows } = await ctx.pool.query<{ id: string }>(`insert into teammates (workspace_id, display_name) select $1, 'Person ' || i from generate_series(1, $2) i returning id`, [ws.id, n]);
  const addresses = rows.map((_r, i) => `person${i}@acme.test`);
  await ctx.pool.query(`insert into emails (workspace_id, teammate_id, address, is_primary) select $1, t, a, true from unnest($2::uuid[], $3::text[]) as x(t, a)`, [ws.id, rows.map((r) => r.id), addresses]);
  await ctx.pool.query(`insert into assignments (workspace_id, signature_id, target_kind, teammate_id, priority) select $1, $2, 'teammate', t, 1 from unnest($3::uuid[]) t`, [ws.id, sig, rows.map((r) => r.id)]);
  return { key: (await createApiKey(ctx.pool, ws.id, 'bench', 'addin')).key, addresses };
}

async function serverWithBareRoute(ctx: AppContext): Promise<FastifyInstance> {
  const server = await buildServer(ctx);
  const body = JSON.stringify({ data: { html: '<p>bare</p>' } });
  server.get('/bare', async (req, reply) => {
    reply.header('etag', '"bare"').header('cache-control', 'private, no-cache');
    if (req.headers['if-none-match'] === '"bare"') return reply.status(304).send();
    return reply.header('content-type', 'application/json').send(body);
  });
  return server;
}

export async function addinScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const seconds = Number(options.seconds ?? (quick ? 3 : 10));
  const connections = Number(options.connections ?? 100);
  const count = Number(options.addresses ?? (quick ? 100 : 500));
  const db = await openBenchDb();
  const ctx = { ...db.ctx, config: { ...db.ctx.config, RATE_LIMIT_ADDIN: 0 } };
  const server = await serverWithBareRoute(ctx);
  try {
    const base = await server.listen({ host: '127.0.0.1', port: 0 });
    const { key, addresses } = await seed(ctx, count);
    const addinPaths = addresses.map((a) => `/v1/addin/signature?email=${encodeURIComponent(a)}&platform=windows&client_version=16.0`);
    const barePaths = addresses.map(() => '/bare');
    log(`warm-up: ${count} addresses, ${connections} composers`);
    await runClient({ base, paths: addinPaths, key, connections, seconds: 2 });
    await runClient({ base, paths: barePaths, key, connections, seconds: 1 });

    const rounds = Math.max(1, Math.round(seconds / 2));
    const runs = { bare: [] as ClientResult[], addin: [] as ClientResult[] };
    const cpu = { bare: 0, addin: 0, postgres: 0 as number | null };
    for (let i = 0; i < rounds; i++) {
      for (const route of ['bare', 'addin'] as const) {
        const c0 = cpuNow();
        const pg0 = db.postgresCpuSeconds();
        runs[route].push(await runClient({ base, paths: route === 'bare' ? barePaths : addinPaths, key, connections, seconds: seconds / rounds }));
        cpu[route] += cpuNow() - c0;
        if (route === 'addin') cpu.postgres = pg0 === null || cpu.postgres === null ? null : cpu.postgres + db.postgresCpuSeconds()! - pg0;
      }
    }
    const bare = sum(runs.bare);
    const addin = sum(runs.addin);
    log(`bare: ${Math.round(bare.requests / seconds)}/s, p50 ${bare.p50_ms.toFixed(2)} ms, p99 ${bare.p99_ms.toFixed(2)} ms`);
    log(`add-in: ${Math.round(addin.requests / seconds)}/s (${addin.ok200} x 200, ${addin.ok304} x 304, ${addin.errors} errors), p50 ${addin.p50_ms.toFixed(2)} ms, p99 ${addin.p99_ms.toFixed(2)} ms`);
    const ratio = addin.requests / bare.requests;
    const failures: string[] = [];
    if (addin.errors || bare.errors) failures.push(`${addin.errors + bare.errors} answers were neither 200 nor 304`);
    if (!addin.ok304 || !addin.ok200) failures.push('the answers did not mix 200 and 304');
    return {
      seconds_per_route: seconds,
      rounds,
      composers: connections,
      addresses: count,
      addin: { requests_per_s: Math.round(addin.requests / seconds), p50_ms: round(addin.p50_ms, 2), p99_ms: round(addin.p99_ms, 2), ok200: addin.ok200, ok304: addin.ok304 },
      bare: { requests_per_s: Math.round(bare.requests / seconds), p50_ms: round(bare.p50_ms, 2), p99_ms: round(bare.p99_ms, 2) },
      cpu_s: { server_addin: round(cpu.addin, 2), server_bare: round(cpu.bare, 2), client_addin: round(addin.client_cpu_s, 2), postgres_addin: cpu.postgres === null ? null : round(cpu.postgres, 2) },
      goal_p99_ms: 50,
      goal_ratio: 0.5,
      ratio: round(ratio, 3),
      met: ratio >= 0.5 && addin.p99_ms <= 50,
      failures,
    };
  } finally {
    await server.close().catch(() => {});
    await db.close();
  }
}
