/** `sigsync integration ...`, `sigsync sync` and `sigsync runs` as real child processes. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext, TEST_KEY } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { eventCount, googleServiceAccount, workspaceWithKey } from '../helpers/fixtures.ts';

describe('sync and integration CLI', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let dir: string;
  let workspaceId: string;
  let integrationId: string;
  // The emulated tenant is on loopback, which integration URLs may use only with this flag.
  const env = () => ({ DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  const file = (name: string, value: unknown) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, JSON.stringify(value));
    return p;
  };

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(30));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-cli-'));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
  });
  afterAll(async () => {
    await google.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('integration connect refuses credentials the provider rejects, and stores nothing', async () => {
    google.knobs.revokeAtRequest = 1;
    const r = await runCli(
      [
        'integration',
        'connect',
        '--workspace',
        workspaceId,
        '--kind',
        'google_workspace',
        '--category',
        'teammates',
        '--credentials-file',
        file('key.json', googleServiceAccount()),
        '--config',
        file('config.json', { base_url: `${google.url}/`, token_url: `${google.url}/token` }),
      ],
      env(),
    );
    google.knobs.revokeAtRequest = null;
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the provider refused these credentials \(access_lost\)/);
    expect(r.stderr).not.toContain('PRIVATE KEY');
    expect((await t.ctx.pool.query('select count(*)::int as n from integrations where workspace_id = $1', [workspaceId])).rows[0].n).toBe(0);
  });

  it('integration connect refuses malformed credentials with the field at fault', async () => {
    const r = await runCli(
      [
        'integration',
        'connect',
        '--workspace',
        workspaceId,
        '--kind',
        'google_workspace',
        '--category',
        'teammates',
        '--credentials-file',
        file('bad.json', { type: 'service_account' }),
      ],
      env(),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/credentials: client_email/);
  });

  it('integration connect checks access, stores the credentials encrypted and fires integration.connected', async () => {
    const r = await runCli(
      [
        'integration',
        'connect',
        '--workspace',
        workspaceId,
        '--kind',
        'google_workspace',
        '--category',
        'teammates',
        '--name',
        'Google',
        '--credentials-file',
        file('key.json', googleServiceAccount()),
        '--config',
        file('config.json', { base_url: `${google.url}/`, token_url: `${google.url}/token` }),
      ],
      env(),
    );
    expect(r.code, r.stderr).toBe(0);
    integrationId = /integration (\S+) connected/.exec(r.stdout)![1]!;
    const row = await t.ctx.pool.query('select credentials from integrations where id = $1', [integrationId]);
    expect(row.rows[0].credentials.toString('latin1')).not.toContain('PRIVATE KEY');
    expect(await eventCount(t.ctx, workspaceId, 'integration.connected')).toBe(1);
  });

  it('sync --follow runs the sync and prints the final counters', async () => {
    const r = await runCli(['sync', '--integration', integrationId, '--follow'], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/succeeded: pages 1 · seen 30 · created 30 · updated 0 · unchanged 0 · deleted 0/);
    // Piped: plain progress lines on stderr, no template placeholders or cursor codes.
    expect(r.stderr).toMatch(/^Google: 30 users · pages 1 · \+30 ~0 -0 · succeeded$/m);
    expect(r.stderr).not.toMatch(/[{}]/);
    expect(r.stderr).not.toContain(String.fromCharCode(27));
  });

  it('sync --follow exits 1 when the run fails, with the provider error', async () => {
    google.knobs.faultRoute = 'users.list';
    google.knobs.malformedAtRequest = (google.counters.byRoute['users.list'] ?? 0) + 1;
    const r = await runCli(['sync', '--integration', integrationId, '--follow'], env());
    google.knobs.faultRoute = null;
    google.knobs.malformedAtRequest = null;
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ failed: pages 0 · seen 0 /);
    expect(r.stdout).toMatch(/invalid_response: /);
  });

  it('runs lists the run, newest first, with where its time went', async () => {
    const r = await runCli(['runs', '--workspace', workspaceId], env());
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/SLOWEST_STAGES$/m);
    expect(r.stdout).toMatch(/Google\s+failed\s+full\s+cli\s+0\s+0\s+0/);
    // The run that wrote 30 people names its slowest stages, with their seconds.
    expect(r.stdout).toMatch(
      /Google\s+succeeded\s+full\s+cli\s+1\s+30\s+30\s.*\b(teammates|addresses|events|fetch_wait|match|stage|memberships|values|seen|installs|photos) \d+\.\d+ s/,
    );
  });

  it('sync --follow stops following a run whose provider does not answer, says what it waits on, and the next sync carries the run on', async () => {
    // The held request would time out only after 5 minutes: what ends it is the stopping worker's abort.
    await t.ctx.pool.query(`update integrations set config = config || '{"request_timeout_ms": 300000}' where id = $1`, [integrationId]);
    google.knobs.hold = { route: 'users.list', after: google.counters.byRoute['users.list'] ?? 0 };
    let stalled;
    try {
      // The deadline is the test's point: the command must not wait for the held request.
      stalled = await runCli(['sync', '--integration', integrationId, '--follow', '--stall-timeout', '2'], env(), 90_000);
    } finally {
      google.knobs.hold = null;
    }
    expect(stalled.code, stalled.stderr).toBe(1);
    const runId = /sync run (\S+) started/.exec(stalled.stdout)![1]!;
    expect(stalled.stdout).toContain(`${runId} made no progress for 2 s, so this stopped following it: pages 0 · seen 0 · created 0 `);
    expect(stalled.stdout).toMatch(
      /^ {2}its job: stopped: the worker stopped while this run was waiting on the provider \(users\.list: AbortError: .+\); it runs again from \S+ \(attempt 2 of 10\)$/m,
    );
    expect(stalled.stdout).toContain(`  look further: sigsync runs --integration ${integrationId}`);
    // No stack trace, raw or inside a JSON log line, and nothing logged as an error.
    expect(stalled.stderr).not.toMatch(/(\n|\\n)\s+at /);
    expect(stalled.stderr).not.toContain('"level":"error"');
    // The run was left running at its checkpoint, its job queued again, released by the stopped worker.
    const run = await t.ctx.pool.query<{ status: string }>('select status from sync_runs where id = $1', [runId]);
    expect(run.rows[0]!.status).toBe('running');
    const job = await t.ctx.pool.query<{ locked_by: string | null; attempts: number }>(`select locked_by, attempts from graphile_worker.jobs where key = $1`, [
      `sync:${integrationId}`,
    ]);
    expect(job.rows).toEqual([{ locked_by: null, attempts: 1 }]);

    const next = await runCli(['sync', '--integration', integrationId, '--follow'], env());
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain(`sync run ${runId} is already running for Google (teammates); following it`);
    expect(next.stdout).toMatch(new RegExp(`^${runId} succeeded: pages 1 · seen 30 · created 0 · updated 0 · unchanged 30 `, 'm'));
  });

  it('sync needs exactly one of --integration and --workspace', async () => {
    const r = await runCli(['sync'], env());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/exactly one of --integration ID or --workspace ID/);
  });

  it('integration list shows the status; disconnect fires integration.disconnected once', async () => {
    const list = await runCli(['integration', 'list', '--workspace', workspaceId], env());
    expect(list.stdout).toMatch(new RegExp(`${integrationId}.*google_workspace\\s+teammates\\s+Google\\s+active`));
    const d1 = await runCli(['integration', 'disconnect', integrationId], env());
    expect(d1.stdout).toMatch(/disconnected/);
    const d2 = await runCli(['integration', 'disconnect', integrationId], env());
    expect(d2.stdout).toMatch(/was already disconnected/);
    expect(await eventCount(t.ctx, workspaceId, 'integration.disconnected')).toBe(1);
    const s = await runCli(['sync', '--integration', integrationId], env());
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(/is disconnected; reconnect it first/);
  });

  it('integration reconnect returns it to active without a second integration.connected, and starts a sync', async () => {
    const r = await runCli(['integration', 'reconnect', integrationId, '--credentials-file', file('key.json', googleServiceAccount())], env());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/reconnected, status active/);
    expect(r.stdout).toMatch(/sync run \S+ started/);
    expect(await eventCount(t.ctx, workspaceId, 'integration.connected')).toBe(1);
  });
});
