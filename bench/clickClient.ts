/**
 * The load of the `clicks` benchmark, in its own process so that its CPU is not the server's:
 * argv[2] is JSON {urls, connections, seconds}. Keeps `connections` requests in flight over
 * keep-alive connections (undici), each request to the next URL of the list, for `seconds`; a
 * response must be a 302 with a Location. Prints one JSON line: {requests, non302, latencies_ms
 * (sorted sample), cpu_s}.
 */
import { Pool } from 'undici';
import { percentile } from './stats.ts';

const args = JSON.parse(process.argv[2] ?? '{}') as { urls: string[]; connections: number; seconds: number };
const origin = new URL(args.urls[0]!).origin;
const paths = args.urls.map((u) => new URL(u).pathname);
const pool = new Pool(origin, { connections: args.connections, pipelining: 1 });
const latencies: number[] = [];
let requests = 0;
let non302 = 0;
let next = 0;
const cpu0 = process.cpuUsage();
const until = performance.now() + args.seconds * 1000;

async function worker(): Promise<void> {
  while (performance.now() < until) {
    const path = paths[next++ % paths.length]!;
    const t0 = performance.now();
    const res = await pool.request({ origin, path, method: 'GET', headers: { 'user-agent': `Mozilla/5.0 (X11; Linux x86_64) bench/${next % 997}` } });
    await res.body.dump();
    latencies.push(performance.now() - t0);
    requests++;
    if (res.statusCode !== 302 || !res.headers.location) non302++;
  }
}

await Promise.all(Array.from({ length: args.connections }, worker));
await pool.close();
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  JSON.stringify({
    requests,
    non302,
    p50_ms: latencies.length ? percentile(latencies, 50) : 0,
    p99_ms: latencies.length ? percentile(latencies, 99) : 0,
    cpu_s: (cpu.user + cpu.system) / 1e6,
  }) + '\n',
);
