/**
 * `publish-latency`: N publishes of a one-recipient signature through the HTTP API
 * (POST /v1/signatures/{id}/publish), each measured from the call to the emulated Gmail receiving
 * the signature write. The worker runs in this process; the provider is the loopback emulator.
 *
 *   npm run bench -- publish-latency [--publishes 100]
 *
 * The directory is synced by the worker's own job (one execution of the run), the signature is
 * assigned to the first teammate with a primary address (by address), and every wait has a timeout
 * (`--wait` seconds, default 30), so a write that never comes ends the benchmark with an error.
 * `cpu` holds the CPU seconds of this process (worker and API; the emulator runs in it too) and of
 * Postgres over the measured publishes.
 */
import { buildServer } from '../src/api/server.ts';
import { createApiKey } from '../src/db/apiKeys.ts';
import { withTx } from '../src/db/tx.ts';
import { createWorkspace } from '../src/db/workspaces.ts';
import { insertIntegration } from '../src/integrations/integrations.ts';
import { startRuns } from '../src/integrations/syncRuns.ts';
import { startWorker } from '../src/worker/runner.ts';
import { generateGoogleTenant, startGoogleEmulator } from '../emulators/google.ts';
import { googleServiceAccount } from './fixtures.ts';
import type { BenchArgs, Figures } from './types.ts';
import { openBenchDb, until, within } from './support.ts';
import { median, percentile, round } from './stats.ts';
import { startCpuMeter } from './cpu.ts';

export async function publishLatencyScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const n = Number(options.publishes ?? (quick ? 20 : 100));
  const waitMs = Number(options.wait ?? 30) * 1000;
  const db = await openBenchDb();
  const google = await startGoogleEmulator(generateGoogleTenant(1));
  // It measures a publish, not the per-key limit on publishes (60 a minute by default): no limit here.
  const server = await buildServer({ ...db.ctx, config: { ...db.ctx.config, RATE_LIMIT_PUBLISH: 0 } });
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
      const d = await insertIntegration(db.ctx, c, {
        workspaceId: ws.id,
        kind: 'google_workspace',
        category: 'teammates',
        name: 'Directory',
        credentials: creds,
        config,
      });
      await insertIntegration(db.ctx, c, { workspaceId: ws.id, kind: 'google_workspace', category: 'signatures', name: 'Gmail', credentials: creds, config });
      return d;
    });
    // The run's job is queued with it; the worker executes it (and nothing else does).
    const [run] = await startRuns(db.ctx.pool, ws.id, [directory.id], { trigger: 'cli' });
    await until(
      async () => (await db.ctx.pool.query(`select 1 from sync_runs where id = $1 and status <> 'running'`, [run!.id])).rowCount === 1,
      waitMs,
      'the directory sync',
    );
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : null,
      });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return (await r.json()) as { data: { id: string } };
    };
    const tree = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });
    const sig = await call('POST', '/v1/signatures', { signature: { name: 'Latency', draft_content: tree('v0') } });
    const recipient = (
      await db.ctx.pool.query<{ id: string; address: string }>(
        `select t.id, e.address from teammates t join emails e on e.teammate_id = t.id and e.is_primary
          where t.workspace_id = $1 and t.deleted_at is null order by e.address limit 1`,
        [ws.id],
      )
    ).rows[0];
    if (!recipient) throw new Error('the directory sync stored no teammate with an address');
    const teammate = recipient.id;
    await call('PUT', `/v1/signatures/${sig.data.id}/assignments`, { assignments: { teammates: [{ id: teammate, priority: 1 }], groups: [], org_units: [] } });

    const latencies: number[] = [];
    const address = recipient.address.toLowerCase();
    let cpu: Awaited<ReturnType<typeof startCpuMeter>> | undefined;
    for (let i = 0; i <= n; i++) {
      await call('PATCH', `/v1/signatures/${sig.data.id}`, { signature: { draft_content: tree(`version ${i}`) } });
      const version = new RegExp(`version ${i}(?!\\d)`);
      const written = new Promise<void>((resolve) => {
        const onWrite = (to: string, html: string) => {
          if (to !== address || !version.test(html)) return;
          google.events.off('write', onWrite);
          resolve();
        };
        google.events.on('write', onWrite);
      });
      const t0 = performance.now();
      await call('POST', `/v1/signatures/${sig.data.id}/publish`);
      await within(written, waitMs, `publish ${i}: the signature write to ${address}`);
      if (i > 0)
        latencies.push(performance.now() - t0); // the first one warms up
      else cpu = await startCpuMeter(db.ctx.pool, null);
    }
    const p50 = median(latencies);
    log(`${n} publishes: p50 ${p50.toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms`);
    return {
      publishes: n,
      p50_ms: round(p50, 1),
      p99_ms: round(percentile(latencies, 99), 1),
      max_ms: round(Math.max(...latencies), 1),
      goal_p50_ms: 100,
      ratio: round(p50 / 100, 2),
      cpu: cpu!(),
      emulator_in_process: true,
    };
  } finally {
    await runner.stop();
    await server.close();
    await google.close();
    await db.close();
  }
}
