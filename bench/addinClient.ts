/**
 * The load of the `addin` benchmark, in its own process: argv[2] is JSON {base, paths, key,
 * connections, seconds}. `connections` composers each keep one request in flight (keep-alive,
 * undici), each to the next path of the list; a composer that has an address's ETag sends it as
 * If-None-Match on every other fetch of that address, so answers mix 200 and 304. Prints one JSON
 * line: {requests, ok200, ok304, errors, p50_ms, p99_ms, cpu_s}.
 */
import { Pool } from 'undici';
import { percentile } from './stats.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as { base: string; paths: string[]; key: string; connections: number; seconds: number };
const origin = new URL(args.base).origin;
const pool = new Pool(origin, { connections: args.connections, pipelining: 1 });
const latencies: number[] = [];
const etags = new Map<string, string>();
const counts = { requests: 0, ok200: 0, ok304: 0, errors: 0 };
let next = 0;
const cpu0 = process.cpuUsage();
const until = performance.now() + args.seconds * 1000;

async function composer(): Promise<void> {
  while (performance.now() < until) {
    const n = next++;
    const path = args.paths[n % args.paths.length]!;
    const etag = etags.get(path);
    const revalidate = etag !== undefined && Math.floor(n / args.paths.length) % 2 === 1;
    const t0 = performance.now();
    const res = await pool.request({ origin, path, method: 'GET', headers: { authorization: `Bearer ${args.key}`, ...(revalidate ? { 'if-none-match': etag } : {}) } });
    await res.body.dump();
    latencies.push(performance.now() - t0);
    counts.requests++;
    if (res.statusCode === 200) {
      counts.ok200++;
      const e = res.headers.etag;
      if (typeof e === 'string') etags.set(path, e);
    } else if (res.statusCode === 304) counts.ok304++;
    else counts.errors++;
  }
}

await Promise.all(Array.from({ length: args.connections }, composer));
await pool.close();
const cpu = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({ ...counts, p50_ms: latencies.length ? percentile(latencies, 50) : 0, p99_ms: latencies.length ? percentile(latencies, 99) : 0, cpu_s: (cpu.user + cpu.system) / 1e6 }) + '\n');
