/**
 * `addin`: 100 concurrent composers (bench/addinClient.ts, its own process) fetch signatures from the
 * Outlook add-in route, half of the fetches revalidating with If-None-Match (so 200 and 304 mix),
 * and, on the same server in the same run, a bare route that answers a fixed JSON body with an ETag
 * and nothing else, driven by the same client the same way. Goals: p99 ≤ 50 ms, and add-in
 * throughput ≥ 0.5 × the bare route's.
 *
 *   npm run bench -- addin [--seconds 10] [--connections 100] [--addresses 500] [--rate R]
 *
 * Two measurements per route, in alternating rounds of about 2 s (bare, add-in, bare, ...):
 * - capacity: the composers ask again as soon as they have an answer. Gives requests/s, hence the
 *   ratio. Its latency (`saturated_p50_ms`, `saturated_p99_ms`) is reported but is not the route's:
 *   with `connections` requests always in flight, a saturated server answers each after about
 *   connections ÷ throughput (Little's law), whatever the route does; the bare route misses 50 ms
 *   that way too on 2 cores.
 * - latency: the composers ask on a schedule, together `--rate` requests/s (default: a quarter of the
 *   bare route's capacity in this run, so a route that just meets the throughput goal is half busy),
 *   each request timed from when it was due. Gives p50/p99, the figures the goal is about.
 *
 * Key-only mode (an add-in key), the production render cache (ADDIN_CACHE_SECONDS 10), the rate limit
 * off (every composer shares the key and the client address). Reports the CPU seconds of the server (this process), the
 * client process and Postgres, and the server's CPU per request of each route, stabler than wall
 * time on a shared machine.
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

interface ClientArgs {
  base: string;
  paths: string[];
  key: string;
  connections: number;
  seconds: number;
  /** Requests per second of all composers together; unset: as fast as answers come. */
  rate?: number;
}

/** A client run; `onStart` is called when its clock starts (after its warm-up). */
function runClient(args: ClientArgs, onStart: () => void = () => {}): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'addinClient.ts'), JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.startsWith('start\n')) {
        out = out.slice('start\n'.length);
        onStart();
      }
    });
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
  const sig = (
    await ctx.pool.query<{ id: string }>(
      `insert into signatures (workspace_id, name, draft_content, content, last_published_at) values ($1, 'Std', $2, $2, now()) returning id`,
      [ws.id, content],
    )
  ).rows[0]!.id;
  const { rows } = await ctx.pool.query<{ id: string }>(
    `insert into teammates (workspace_id, display_name) select $1, 'Person ' || i from generate_series(1, $2) i returning id`,
    [ws.id, n],
  );
  const addresses = rows.map((_r, i) => `person${i}@acme.test`);
  await ctx.pool.query(
    `insert into emails (workspace_id, teammate_id, address, is_primary) select $1, t, a, true from unnest($2::uuid[], $3::text[]) as x(t, a)`,
    [ws.id, rows.map((r) => r.id), addresses],
  );
  await ctx.pool.query(
    `insert into assignments (workspace_id, signature_id, target_kind, teammate_id, priority) select $1, $2, 'teammate', t, 1 from unnest($3::uuid[]) t`,
    [ws.id, sig, rows.map((r) => r.id)],
  );
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

type Route = 'bare' | 'addin';
type Phase = { runs: Record<Route, ClientResult[]>; serverCpu: Record<Route, number>; postgresCpu: number | null };

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
    const paths: Record<Route, string[]> = {
      addin: addresses.map((a) => `/v1/addin/signature?email=${encodeURIComponent(a)}&platform=windows&client_version=16.0`),
      bare: addresses.map(() => '/bare'),
    };
    log(`warm-up: ${count} addresses, ${connections} composers`);
    for (const route of ['addin', 'bare'] as const) await runClient({ base, paths: paths[route], key, connections, seconds: quick ? 1 : 2 });

    const rounds = Math.max(1, Math.round(seconds / 2));
    /** Alternating rounds of both routes, with the server's and Postgres's CPU of each. */
    const phase = async (rate: number | undefined): Promise<Phase> => {
      const p: Phase = { runs: { bare: [], addin: [] }, serverCpu: { bare: 0, addin: 0 }, postgresCpu: 0 };
      for (let i = 0; i < rounds; i++) {
        for (const route of ['bare', 'addin'] as const) {
          // CPU from the client's clock start: its warm-up requests are not counted, nor is their cost.
          let c0 = 0;
          let pg0: number | null = null;
          const result = await runClient({ base, paths: paths[route], key, connections, seconds: seconds / rounds, ...(rate ? { rate } : {}) }, () => {
            c0 = cpuNow();
            pg0 = db.postgresCpuSeconds();
          });
          p.runs[route].push(result);
          p.serverCpu[route] += cpuNow() - c0;
          const pgEnd = db.postgresCpuSeconds();
          if (route === 'addin') p.postgresCpu = pg0 === null || pgEnd === null || p.postgresCpu === null ? null : p.postgresCpu + pgEnd - pg0;
        }
      }
      return p;
    };
    const capacity = await phase(undefined);
    const cap = { bare: sum(capacity.runs.bare), addin: sum(capacity.runs.addin) };
    const perSecond = (n: number) => Math.round(n / seconds);
    log(
      `capacity: bare ${perSecond(cap.bare.requests)}/s (p99 ${cap.bare.p99_ms.toFixed(1)} ms saturated), add-in ${perSecond(cap.addin.requests)}/s (p99 ${cap.addin.p99_ms.toFixed(1)} ms saturated)`,
    );
    const rate = Number(options.rate ?? Math.max(1, Math.round(cap.bare.requests / seconds / 4)));
    const paced = await phase(rate);
    const lat = { bare: sum(paced.runs.bare), addin: sum(paced.runs.addin) };
    log(
      `at ${rate} requests/s: bare p50 ${lat.bare.p50_ms.toFixed(2)} ms, p99 ${lat.bare.p99_ms.toFixed(2)} ms; add-in p50 ${lat.addin.p50_ms.toFixed(2)} ms, p99 ${lat.addin.p99_ms.toFixed(2)} ms (${lat.addin.ok200} x 200, ${lat.addin.ok304} x 304)`,
    );

    const ratio = cap.addin.requests / cap.bare.requests;
    const failures: string[] = [];
    const errors = cap.addin.errors + cap.bare.errors + lat.addin.errors + lat.bare.errors;
    if (errors) failures.push(`${errors} answers were neither 200 nor 304`);
    if (!cap.addin.ok304 || !cap.addin.ok200 || !lat.addin.ok304 || !lat.addin.ok200) failures.push('the answers did not mix 200 and 304');
    const usPerRequest = (cpu: number, n: number) => (n ? round((cpu / n) * 1e6, 1) : null);
    const figures = (route: Route) => ({
      requests_per_s: perSecond(cap[route].requests),
      p50_ms: round(lat[route].p50_ms, 2),
      p99_ms: round(lat[route].p99_ms, 2),
      ok200: cap[route].ok200 + lat[route].ok200,
      ok304: cap[route].ok304 + lat[route].ok304,
      paced_requests_per_s: perSecond(lat[route].requests),
      saturated_p50_ms: round(cap[route].p50_ms, 2),
      saturated_p99_ms: round(cap[route].p99_ms, 2),
      server_cpu_us_per_request: usPerRequest(capacity.serverCpu[route], cap[route].requests),
    });
    return {
      seconds_per_route: seconds,
      rounds,
      composers: connections,
      addresses: count,
      offered_per_s: rate,
      addin: figures('addin'),
      bare: figures('bare'),
      cpu_s: {
        server_addin: round(capacity.serverCpu.addin + paced.serverCpu.addin, 2),
        server_bare: round(capacity.serverCpu.bare + paced.serverCpu.bare, 2),
        client_addin: round(cap.addin.client_cpu_s + lat.addin.client_cpu_s, 2),
        client_bare: round(cap.bare.client_cpu_s + lat.bare.client_cpu_s, 2),
        postgres_addin: capacity.postgresCpu === null || paced.postgresCpu === null ? null : round(capacity.postgresCpu + paced.postgresCpu, 2),
      },
      goal_p99_ms: 50,
      goal_ratio: 0.5,
      ratio: round(ratio, 3),
      met: ratio >= 0.5 && lat.addin.p99_ms <= 50,
      failures,
    };
  } finally {
    await server.close().catch(() => {});
    await db.close();
  }
}
