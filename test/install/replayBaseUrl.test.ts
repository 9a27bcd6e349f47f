/**
 * The public base URL is the deployment's: a CLI `install replay` run from a shell that sets neither
 * PORT nor PUBLIC_BASE_URL renders byte for byte the HTML the worker installed, tracked links and
 * view image included (they name the URL the API server recorded, src/db/deployment.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'graphile-worker';
import { startWorker } from '../../src/worker/runner.ts';
import { switchEventTracking } from '../../src/analytics/tracking.ts';
import { resolvePublicBaseUrl } from '../../src/db/deployment.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { connectGoogle, publishAndInstall, syncAndAssignToGroups, workspaceWithKey } from '../helpers/fixtures.ts';
import { DEADLINE_MS, runCli, waitFor } from '../helpers/cli.ts';

const BASE = 'http://127.0.0.1:3411';
const tree = {
  type: 'stack',
  id: 'root',
  children: [{ type: 'text', id: 'pricing', tokens: [{ type: 'textToken', id: 'p', value: 'Pricing', href: { text: 'https://acme.test/pricing' } }] }],
};

describe('install replay renders what the worker installed', () => {
  const t = useTestContext({ PUBLIC_BASE_URL: BASE });
  let google: GoogleEmulator;
  let runner: Runner;

  const drained = () =>
    waitFor(
      async () =>
        (await t.ctx.pool.query<{ n: number }>(`select count(*)::int as n from graphile_worker.jobs where run_at <= now() + interval '5 seconds'`)).rows[0]!
          .n === 0,
      DEADLINE_MS,
      50,
    );

  beforeAll(async () => {
    // What `sigsync api` (or `serve`) with PUBLIC_BASE_URL does as it starts.
    await resolvePublicBaseUrl(t.ctx.pool, { role: 'server', configured: BASE, explicit: true, logger: t.ctx.logger });
    google = await startGoogleEmulator(generateGoogleTenant(3));
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const signatureId = await syncAndAssignToGroups(t.ctx, workspaceId, directory.id, tree);
    await switchEventTracking(t.ctx.pool, workspaceId, true);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
    await publishAndInstall(t.ctx, workspaceId, signatureId);
    await drained();
  });
  afterAll(async () => {
    await runner?.stop();
    await google?.close();
  });

  it('a dry-run replay without PORT or PUBLIC_BASE_URL renders byte-identical HTML, links and all', async () => {
    const installed = google.signatures()['user1@example.test']!;
    expect(installed).toContain(`${BASE}/c/`);
    expect(installed).toContain(`${BASE}/v/`);
    const r = await runCli(['install', 'replay', '--email', 'user1@example.test', '--dry-run', '--json'], {
      DATABASE_URL: t.url,
      ENCRYPTION_KEY: TEST_KEY,
      ALLOW_INSECURE_OUTBOUND_URLS: '1',
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.installs[0].rendered.html).toBe(installed);
    expect(report.installs[0].diff).toBe('(no change)');
  });
});
