/**
 * Every failing mailbox in one list: GET /v1/installations, `sigsync install list` and the
 * `sigsync_installations` gauge on /metrics, over installs the worker really made against the Google
 * emulator, where one user has no Gmail (the provider answers "Mail service not enabled").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'graphile-worker';
import { startWorker } from '../../src/worker/runner.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { TEST_KEY } from '../helpers/db.ts';
import { connectGoogle, publishAndInstall, syncAndAssignToGroups } from '../helpers/fixtures.ts';
import { runCli, waitFor } from '../helpers/cli.ts';
import { useApi } from '../api/helpers.ts';

const tree = { type: 'stack', id: 'root', children: [{ type: 'text', id: 'hi', tokens: [{ type: 'textToken', id: 't', value: 'Best regards' }] }] };
const FAILING = 'user2@example.test';

describe('the list of installations', () => {
  const api = useApi();
  const pool = () => api.t.ctx.pool;
  let google: GoogleEmulator;
  let runner: Runner;
  let gmailId: string;
  let signatureId: string;
  const env = () => ({ DATABASE_URL: api.t.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '1' });

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(4));
    google.tenant.noMailbox.add(FAILING);
    const directory = await connectGoogle(api.t.ctx, api.ws, google.url);
    gmailId = (await connectGoogle(api.t.ctx, api.ws, google.url, { category: 'signatures', name: 'Gmail' })).id;
    signatureId = await syncAndAssignToGroups(api.t.ctx, api.ws, directory.id, tree);
    runner = await startWorker(api.t.ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
    await publishAndInstall(api.t.ctx, api.ws, signatureId);
    // Every primary install settled: the failing one failed, the others installed.
    await waitFor(async () => {
      const { rows } = await pool().query<{ status: string; n: number }>(
        `select status, count(*)::int as n from installations where workspace_id = $1 and kind = 'primary' group by 1`,
        [api.ws],
      );
      const by = Object.fromEntries(rows.map((r) => [r.status, r.n]));
      return by.failed === 1 && by.installed === 3 && Object.keys(by).length === 2;
    });
  });
  afterAll(async () => {
    await runner?.stop();
    await google?.close();
  });

  it("GET /v1/installations?status=failed lists the failing mailbox with the provider's message, its code and the fix the replay prints", async () => {
    const r = await api.call('GET', '/v1/installations?status=failed');
    expect(r.status).toBe(200);
    expect(r.body.pagination).toEqual({ page: 1, limit: 25, total_count: 1, total_pages: 1, has_more: false });
    const [row] = r.body.data;
    expect(row).toMatchObject({
      status: 'failed',
      kind: 'primary',
      email: { address: FAILING },
      signature: { id: signatureId },
      integration: { id: gmailId, kind: 'google_workspace', name: 'Gmail' },
      error_code: 'forbidden',
      error_message: 'sendAs.patch: Mail service not enabled',
      failing_since: expect.any(String),
      attempts: expect.any(Number),
    });
    // One text: what `install replay --dry-run` prints as the fix is what the list carries.
    const replay = await runCli(['install', 'replay', '--email', FAILING, '--dry-run'], env());
    const printed = /^ {2}fix: (.+)$/m.exec(replay.stdout)?.[1];
    expect(printed, replay.stdout).toBeTruthy();
    expect(row.fix).toBe(printed);
  });

  it('filters by integration, signature and address (any case), pages like the spec, and shows only its own workspace', async () => {
    const installed = await api.call('GET', `/v1/installations?status=installed&integration_id=${gmailId}&signature_id=${signatureId}&per_page=2&page=2`);
    expect(installed.body.pagination).toEqual({ page: 2, limit: 2, total_count: 3, total_pages: 2, has_more: false });
    expect(installed.body.data).toHaveLength(1);
    expect(installed.body.data[0]).toMatchObject({ status: 'installed', error_code: null, fix: null });
    const one = await api.call('GET', `/v1/installations?address=${encodeURIComponent(FAILING.toUpperCase())}`);
    expect(one.body.data.map((d: { email: { address: string } }) => d.email.address)).toEqual([FAILING]);
    const other = await api.call('GET', '/v1/installations?status=failed', undefined, api.otherKey);
    expect(other.body).toEqual({ data: [], pagination: { page: 1, limit: 25, total_count: 0, total_pages: 1, has_more: false } });
    const foreign = await api.call('GET', `/v1/installations?integration_id=${gmailId}`, undefined, api.otherKey);
    expect(foreign.body.pagination.total_count).toBe(0);
  });

  it('bad filters answer 422 naming the field', async () => {
    const status = await api.call('GET', '/v1/installations?status=broken');
    expect(status.status).toBe(422);
    expect(status.body.details).toEqual([expect.objectContaining({ field: 'status', code: 'invalid_value' })]);
    const id = await api.call('GET', '/v1/installations?integration_id=nope&per_page=0');
    expect(id.status).toBe(422);
    expect(id.body.details.map((d: { field: string }) => d.field).sort()).toEqual(['integration_id', 'per_page']);
  });

  it('sigsync install list --status failed prints the mailbox, the message and the fix; --json the API shape', async () => {
    // Two workspaces here: the command asks which.
    const ambiguous = await runCli(['install', 'list', '--status', 'failed'], env());
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('--workspace');
    const r = await runCli(['install', 'list', '--status', 'failed', '--workspace', api.ws], env());
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ADDRESS\s+INTEGRATION\s+KIND\s+SIGNATURE\s+STATUS\s+ERROR\s+FAILING_SINCE\s+ATTEMPTS\s+MESSAGE\s+FIX$/);
    expect(lines[1]).toMatch(
      new RegExp(
        `^${FAILING.replace(/\./g, '\\.')}\\s+Gmail\\s+primary\\s+.*failed\\s+forbidden\\s+.*sendAs\\.patch: Mail service not enabled\\s+the provider refuses to change this mailbox`,
      ),
    );
    expect(lines.at(-1)).toBe('page 1 of 1: 1 installation(s)');
    const json = JSON.parse((await runCli(['install', 'list', '--status', 'installed', '--workspace', api.ws, '--per-page', '2', '--json'], env())).stdout);
    expect(json.pagination).toEqual({ page: 1, limit: 2, total_count: 3, total_pages: 2, has_more: true });
    const bad = await runCli(['install', 'list', '--status', 'broken', '--workspace', api.ws], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--status: expected one of installed, pending');
  });

  it('/metrics has a gauge per status and integration kind', async () => {
    const text = await (await fetch(`${api.base}/metrics`)).text();
    expect(text).toMatch(/^sigsync_installations\{status="failed",integration_kind="google_workspace"\} 1$/m);
    expect(text).toMatch(/^sigsync_installations\{status="installed",integration_kind="google_workspace"\} 3$/m);
    expect(text).toMatch(/^sigsync_installations\{status="access_lost",integration_kind="google_workspace"\} 0$/m);
  });
});
