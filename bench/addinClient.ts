/**
 * The load of the `addin` benchmark, in its own process: argv[2] is JSON {base, paths, key,
 * connections, seconds, rate?}. `connections` composers, each with its own keep-alive connection
 * (undici) and one request in flight at most, each to the next path of the list; a composer that has
 * an address's ETag sends it as If-None-Match on every other fetch of that address, so answers mix
 * 200 and 304. Before the clock starts, uncounted, every composer makes a request (the connections
 * open, the client's code warms up) and every path is asked once (its ETag is known, as the add-in
 * keeps the last copy it received): for every route alike.
 *
 * Without `rate`, composers ask again as soon as they have an answer: the route's capacity (the
 * latency is then mostly the queue that `connections` requests always in flight make). With `rate`
 * (requests per second, all composers together), each composer asks on a schedule (every
 * connections ÷ rate seconds, from a random start), and a request's latency counts from when it was
 * due, so a late answer also delays the next one's count (no coordinated omission).
 *
 * Prints `start` when the clock starts, then one JSON line: {requests, ok200, ok304, errors, p50_ms,
 * p99_ms, cpu_s}.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { percentile } from './stats.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as { base: string; paths: string[]; key: string; connections: number; seconds: number; rate?: number };
const origin = new URL(args.base).origin;
const pool = new Pool(origin, { connections: args.connections, pipelining: 1 });
const latencies: number[] = [];
const etags = new Map<string, string>();
const counts = { requests: 0, ok200: 0, ok304: 0, errors: 0 };
let next = 0;

async function fetchOne(counted: boolean): Promise<void> {
  const n = next++;
  const path = args.paths[n % args.paths.length]!;
  const etag = etags.get(path);
  const revalidate = etag !== undefined && Math.floor(n / args.paths.length) % 2 === 1;
  const res = await pool.request({
    origin,
    path,
    method: 'GET',
    headers: { authorization: `Bearer ${args.key}`, ...(revalidate ? { 'if-none-match': etag } : {}) },
  });
  await res.body.dump();
  if (res.statusCode === 200) {
    const e = res.headers.etag;
    if (typeof e === 'string') etags.set(path, e);
  }
  if (!counted) return;
  counts.requests++;
  if (res.statusCode === 200) counts.ok200++;
  else if (res.statusCode === 304) counts.ok304++;
  else counts.errors++;
}

async function composer(start: number, until: number): Promise<void> {
  if (!args.rate) {
    while (performance.now() < until) {
      const t0 = performance.now();
      await fetchOne(true);
      latencies.push(performance.now() - t0);
    }
    return;
  }
  const interval = (args.connections / args.rate) * 1000;
  for (let due = start + Math.random() * interval; due < until; due += interval) {
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    // Node's timers count whole milliseconds and can wake a little before `due`: a request sent
    // early is timed from when it was sent, one sent late from when it was due.
    const sent = Math.min(due, performance.now());
    await fetchOne(true);
    latencies.push(performance.now() - sent);
  }
}

// Before the clock: every composer once (connections open, code warm), and every path once (its
// render is kept and its ETag known, as an add-in holds the last copy it received).
const warm = Array.from({ length: Math.max(args.connections, args.paths.length) });
let w = 0;
await Promise.all(
  Array.from({ length: args.connections }, async () => {
    while (w < warm.length) {
      w++;
      await fetchOne(false);
    }
  }),
);
// The parent reads the server's and Postgres's CPU from here.
process.stdout.write('start\n');
const cpu0 = process.cpuUsage();
const start = performance.now();
await Promise.all(Array.from({ length: args.connections }, () => composer(start, start + args.seconds * 1000)));
const cpu = process.cpuUsage(cpu0);
await pool.close();
process.stdout.write(
  JSON.stringify({
    ...counts,
    p50_ms: latencies.length ? percentile(latencies, 50) : 0,
    p99_ms: latencies.length ? percentile(latencies, 99) : 0,
    cpu_s: (cpu.user + cpu.system) / 1e6,
  }) + '\n',
);
