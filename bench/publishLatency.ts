/**
 * `publish-latency`: N publishes of a one-recipient signature through the HTTP API
 * (POST /v1/signatures/{id}/publish), each measured from the call to the emulated Gmail receiving
 * the signature write. The worker runs in this process; the provider is the loopback emulator.
 *
 *   npm run bench -- publish-latency [--publishes 100]
 */
import { buildServer } from '../src/api/server.ts';
import { createApiKey } from '../src/db/apiKeys.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/repository.ts';
import { executeRun } from '../src/sync/engine.ts';
import { startRuns } from '../src/sync/runs.ts';
import { startWorker } from '../src/worker/runner.ts';
import { generateGoogleTenant, startGoogleEmulator } from '../src/sandbox/google.ts';
import { googleServiceAccount } from './fixtures.ts';
import type { BenchArgs, Figures } from './scenarios.ts';
import { median, openBenchDb, round } from './support.ts';

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

export async function publishLatencyScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const n = Number(options.publishes ?? (quick ? 20 : 100));
  const db = await openBenchDb();
  const google = await startGoogleEmulator(generateGoogleTenant(1));
  const server = await buildServer(db.ctx);
  await server.listen({ host: '127.0.0.1', port: 0 });
  const addr = server.server.address();
  const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  const runner = await startWorker(db.ctx, { noCron: true, pollInterval: 1000, concurrency: 4 });
  try {
    const ws = await createWorkspace(db.ctx.pool, 'latency');
    const key = (await createApiKey(db.ctx.pool, ws.id)).key;
    const config = { base_url: `${google.url}/`, token_url: `${google.url}/token` };
    const creds = googleServiceAccount();
    const directory = await withTx(db.ctx.pool, async (c) => {
      const d = await insertIntegration(db.ctx, c, { workspaceId: ws.id, kind: 'google_workspace', category: 'teammates', name: 'Directory', credentials: creds, config });
      await insertIntegration(db.ctx, c, { workspaceId: ws.id, kind: 'google_workspace', category: 'signatures', name: 'Gmail', credentials: creds, config });
      return d;
    });
    const [run] = await startRuns(db.ctx.pool, ws.id, [directory.id], { trigger: 'cli' });
    await executeRun(db.ctx, run!.id);
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : null });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as { data: { id: string } };
    };
    const tree = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });
    const sig = await call('POST', '/v1/signatures', { signature: { name: 'Latency', draft_content: tree('v0') } });
    const teammate = (await db.ctx.pool.query<{ id: string }>('select id from teammates where workspace_id = $1', [ws.id])).rows[0]!.id;
    await call('PUT', `/v1/signatures/${sig.data.id}/assignments`, { assignments: { teammates: [{ id: teammate, priority: 1 }], groups: [], org_units: [] } });

    const latencies: number[] = [];
    for (let i = 0; i <= n; i++) {
      await call('PATCH', `/v1/signatures/${sig.data.id}`, { signature: { draft_content: tree(`version ${i}`) } });
      const written = new Promise<void>((resolve) => google.events.once('write', () => resolve()));
      const t0 = performance.now();
      await call('POST', `/v1/signatures/${sig.data.id}/publish`);
      await written;
      if (i > 0) latencies.push(performance.now() - t0); // the first one warms up
    }
    const p50 = median(latencies);
    log(`${n} publishes: p50 ${p50.toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
    return { publishes: n, p50_ms: round(p50, 1), p99_ms: round(percentile(latencies, 99), 1), max_ms: round(Math.max(...latencies), 1), goal_p50_ms: 100, ratio: round(p50 / 100, 2) };
  } finally {
    await runner.stop();
    await server.close();
    await google.close();
    await db.close();
  }
}
