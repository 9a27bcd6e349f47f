/**
 * `clicks`: loopback clients (bench/clickClient.ts, its own process) follow tracked links
 * (`GET /c/{token}`) as fast as they can for a fixed time, and, on the same server in the same run,
 * a bare route that only answers a 302. Goal: tracked throughput ≥ 0.6 × the bare route's (stretch 0.8), and
 * every click answered is recorded exactly once (counted in Postgres after the server closes,
 * which writes what the recorder still holds).
 *
 *   npm run bench -- clicks [--seconds 10] [--connections 32] [--links 1000]
 *
 * The two routes run in alternating rounds of about 2 s (so that a change in the machine's load
 * falls on both), `--seconds` in all for each. Reports clicks/s and p50/p99 latency of both (the
 * median of the rounds'), rows written, CPU seconds of the server process (per route), the client
 * process and Postgres for the tracked rounds, and server CPU per request of each route. The rounds
 * start after a warm-up on the same server; its first second, with every cache empty, is reported
 * apart (`cold`). The per-address limit is off here
 * (every client is 127.0.0.1); the tracked route is otherwise the production one.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { buildServer } from '../src/api/server.ts';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../src/context.ts';
import { linkKey, resolveLinks } from '../src/analytics/links.ts';
import { clickTokens } from '../src/analytics/token.ts';
import { createWorkspace, setEventTracking } from '../src/db/workspaces.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb, until } from './support.ts';
import { openNetworks } from '../src/analytics/networks.ts';
import { median, round } from './stats.ts';

interface ClientResult {
  requests: number;
  non302: number;
  p50_ms: number;
  p99_ms: number;
  cpu_s: number;
}

function runClient(urls: string[], connections: number, seconds: number): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, 'clickClient.ts'), JSON.stringify({ urls, connections, seconds })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as ClientResult) : reject(new Error(`click client exited with ${code}`))));
  });
}

/** The rounds of one route together: requests summed, latencies the median of the rounds'. */
const sum = (rs: ClientResult[]) => ({
  requests: rs.reduce((n, r) => n + r.requests, 0),
  non302: rs.reduce((n, r) => n + r.non302, 0),
  p50_ms: median(rs.map((r) => r.p50_ms)),
  p99_ms: median(rs.map((r) => r.p99_ms)),
  client_cpu_s: rs.reduce((n, r) => n + r.cpu_s, 0),
});

/** The server under test, with a bare route beside the tracked one; started as `sigsync serve` starts it (src/app.ts). */
async function serverWithBareRoute(ctx: AppContext): Promise<FastifyInstance> {
  const server = await buildServer(ctx);
  openNetworks();
  server.get('/bare/:token', async (_req, reply) =>
    reply.status(302).header('location', 'https://acme.test/landing').header('cache-control', 'private, no-store').send(),
  );
  return server;
}

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/** `count` tracked links of a workspace with tracking on, each for its own address, to 10 destinations. */
async function makeLinks(ctx: AppContext, base: string, count: number): Promise<string[]> {
  const ws = await createWorkspace(ctx.pool, 'clicks');
  await setEventTracking(ctx.pool, ws.id, true);
  const signatureId = crypto.randomUUID();
  const tracked: string[] = [];
  const source = { kind: 'signature', id: signatureId } as const;
  for (let i = 0; i < count; i++) {
    const url = `https://acme.test/landing?n=${i % 10}`;
    const t = { workspaceId: ws.id, signatureId, campaignId: null, teammateId: crypto.randomUUID(), emailId: crypto.randomUUID() };
    const ids = await resolveLinks(ctx.pool, t, [{ source, url }]);
    tracked.push(`${base}/c/${clickTokens(ctx.secrets).sign(ids.get(linkKey(t, source, url))!)}`);
  }
  return tracked;
}

export async function clicksScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const seconds = Number(options.seconds ?? (quick ? 3 : 10));
  const connections = Number(options.connections ?? 32);
  const linkCount = Number(options.links ?? (quick ? 100 : 1000));
  const db = await openBenchDb();
  const ctx = { ...db.ctx, config: { ...db.ctx.config, RATE_LIMIT_CLICKS: 0 } };
  const server = await serverWithBareRoute(ctx);
  try {
    const base = await server.listen({ host: '127.0.0.1', port: 0 });
    const tracked = await makeLinks(ctx, base, linkCount);
    const bare = tracked.map((u) => u.replace('/c/', '/bare/'));

    // The first second after the server starts finds every cache empty (each link, and each
    // client's opt-out, read once): reported apart as `cold`. The rounds measure the server as it
    // runs for days, warm, once the warm-up's clicks are written (their batch would otherwise land
    // in the first bare round).
    log(`warm-up: ${linkCount} links, ${connections} connections`);
    const cold = await runClient(tracked, connections, 1);
    await runClient(bare, connections, 1);
    const warm = cold.requests + (await runClient(tracked, connections, 1)).requests;
    const count = async () => Number((await ctx.pool.query('select count(*)::int as n from clicks')).rows[0].n);
    await until(async () => (await count()) >= warm, 60_000, "the warm-up's clicks being written");

    // Alternating rounds of each route, so that a change in the machine's load falls on both alike.
    const rounds = Math.max(1, Math.round(seconds / 2));
    const runs = { bare: [] as ClientResult[], tracked: [] as ClientResult[] };
    const cpu = { bare: 0, tracked: 0, postgres: 0 as number | null };
    for (let i = 0; i < rounds; i++) {
      for (const route of ['bare', 'tracked'] as const) {
        const c0 = cpuNow();
        const pg0 = db.postgresCpuSeconds();
        runs[route].push(await runClient(route === 'bare' ? bare : tracked, connections, seconds / rounds));
        cpu[route] += cpuNow() - c0;
        if (route === 'tracked') cpu.postgres = pg0 === null || cpu.postgres === null ? null : cpu.postgres + db.postgresCpuSeconds()! - pg0;
      }
    }
    const c0 = cpuNow();
    await server.close();
    cpu.tracked += cpuNow() - c0;
    const bareRun = sum(runs.bare);
    const trackedRun = sum(runs.tracked);
    const { rows } = await ctx.pool.query<{ n: number; distinct_ids: number }>(
      'select count(*)::int as n, count(distinct id)::int as distinct_ids from clicks',
    );
    const recorded = rows[0]!.n - warm;
    log(`bare 302: ${Math.round(bareRun.requests / seconds)}/s, p50 ${bareRun.p50_ms.toFixed(2)} ms, p99 ${bareRun.p99_ms.toFixed(2)} ms`);
    log(
      `tracked: ${Math.round(trackedRun.requests / seconds)}/s, p50 ${trackedRun.p50_ms.toFixed(2)} ms, p99 ${trackedRun.p99_ms.toFixed(2)} ms; ${recorded} clicks recorded for ${trackedRun.requests} redirects`,
    );

    const failures: string[] = [];
    if (recorded !== trackedRun.requests) failures.push(`${trackedRun.requests} redirects answered but ${recorded} clicks recorded`);
    if (rows[0]!.distinct_ids !== rows[0]!.n) failures.push('a click id was recorded twice');
    if (trackedRun.non302 || bareRun.non302) failures.push(`${trackedRun.non302 + bareRun.non302} answers were not 302 with a Location`);
    const ratio = trackedRun.requests / bareRun.requests;
    const perRequestUs = (cpuS: number, n: number) => round((cpuS / n) * 1e6, 1);
    return {
      seconds_per_route: seconds,
      rounds,
      connections,
      links: linkCount,
      tracked: { clicks_per_s: Math.round(trackedRun.requests / seconds), p50_ms: round(trackedRun.p50_ms, 2), p99_ms: round(trackedRun.p99_ms, 2), recorded },
      cold: { clicks_per_s: cold.requests, p99_ms: round(cold.p99_ms, 2) },
      bare: { redirects_per_s: Math.round(bareRun.requests / seconds), p50_ms: round(bareRun.p50_ms, 2), p99_ms: round(bareRun.p99_ms, 2) },
      cpu_s: {
        server_tracked: round(cpu.tracked, 2),
        server_bare: round(cpu.bare, 2),
        client_tracked: round(trackedRun.client_cpu_s, 2),
        postgres_tracked: cpu.postgres === null ? null : round(cpu.postgres, 2),
      },
      server_cpu_us_per_request: { tracked: perRequestUs(cpu.tracked, trackedRun.requests), bare: perRequestUs(cpu.bare, bareRun.requests) },
      goal_ratio: 0.6,
      stretch_ratio: 0.8,
      ratio: round(ratio, 3),
      met: ratio >= 0.6,
      failures,
    };
  } finally {
    await server.close().catch(() => {});
    await db.close();
  }
}
