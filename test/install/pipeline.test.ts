/**
 * The install pipeline end to end through graphile-worker, real Postgres and the emulated Google
 * tenant (Gmail sendAs) on loopback, through the real SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'graphile-worker';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { withTx } from '../../src/db/tx.ts';
import { requestSignatureInstall } from '../../src/jobs/triggers.ts';
import { requestInstalls } from '../../src/jobs/triggers.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { validateContent } from '../../src/render/index.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { defaultKnobs } from '../../emulators/http.ts';
import { getIntegration, updateCredentials, type IntegrationRow } from '../../src/integrations/integrations.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, eventCount, googleServiceAccount, mapSmartField, workspaceWithKey } from '../helpers/fixtures.ts';
import { DEADLINE_MS, runCli, waitFor } from '../helpers/cli.ts';
import { assignToEveryGroup, assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';

const FAST = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };

function signatureTree(titleFieldId: string) {
  return {
    type: 'stack',
    id: 'root',
    children: [
      { type: 'text', id: 'name', tokens: [{ type: 'textToken', id: 't1', value: 'Best regards' }] },
      { type: 'text', id: 'title', tokens: [{ type: 'textToken', id: 't2', smartFieldUuid: titleFieldId }] },
    ],
  };
}

describe('install pipeline (Gmail)', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let runner: Runner;
  let workspaceId: string;
  let gmail: IntegrationRow;
  let signatureId: string;
  let titleField: string;

  const count = async (sql: string, params: unknown[] = []) => (await t.ctx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
  const drained = () =>
    waitFor(
      async () => (await count(`select count(*)::int as n from graphile_worker.jobs where run_at <= now() + interval '5 seconds'`)) === 0,
      DEADLINE_MS,
      50,
    );
  const writes = () => [...google.writes.values()].reduce((a, b) => a + b, 0);
  /** A forced install of one address, as a support engineer or a retry would start it. */
  const installOne = async (address: string) => {
    const { rows } = await t.ctx.pool.query<{ id: string }>(`select id from emails where workspace_id = $1 and address = $2`, [workspaceId, address]);
    await requestInstalls(t.ctx.pool, workspaceId, [{ emailId: rows[0]!.id, kind: 'primary', integrationId: gmail.id }], true);
    await drained();
  };
  const publish = async (forced = false) => {
    await withTx(t.ctx.pool, async (c) => {
      await c.query(`update signatures set content = draft_content, last_published_at = now() where id = $1`, [signatureId]);
      await requestSignatureInstall(c, workspaceId, signatureId, { kinds: ['primary'], forced });
    });
    await drained();
  };

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(200));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    gmail = await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    titleField = await mapSmartField(t.ctx, workspaceId, 'job_title', directory.id, 'organizations.primary.title');
    const [run] = await startRuns(t.ctx.pool, workspaceId, [directory.id], { trigger: 'cli' });
    expect((await executeRun(t.ctx, run!.id, { retry: FAST }))?.status).toBe('succeeded');
    const tree = signatureTree(titleField);
    const valid = validateContent(tree, { field: 'signature.draft_content', smartFieldIds: new Set([titleField]) });
    expect(valid.ok).toBe(true);
    signatureId = await insertSignature(t.ctx.pool, workspaceId, { draftContent: tree });
    await assignToEveryGroup(t.ctx.pool, workspaceId, signatureId);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 8 });
    await drained();
  });
  afterAll(async () => {
    await runner?.stop();
    await google?.close();
  });

  it('a publish to 200 recipients installs each mailbox exactly once', async () => {
    await publish();
    expect(await count(`select count(*)::int as n from installations where signature_id = $1 and status = 'installed'`, [signatureId])).toBe(200);
    const sigs = google.signatures();
    expect(Object.keys(sigs)).toHaveLength(200);
    expect(sigs['user1@example.test']).toContain('Software Engineer');
    for (let i = 0; i < 200; i++) expect(google.writes.get(`user${i}@example.test`)).toBe(1);
    // Verified aliases get the same signature.
    expect(google.writes.get('alias10@example.test')).toBe(1);
  });

  it('a republish without a visible change makes zero provider writes', async () => {
    const before = writes();
    await publish();
    expect(writes()).toBe(before);
  });

  it('a forced install writes again', async () => {
    const before = writes();
    await publish(true);
    expect(writes() - before).toBe(200 + 20);
  });

  it('lists only the mailboxes with aliases, on their first install: a new publish writes without listing', async () => {
    const listed = () => google.counters.byRoute['sendAs.list'] ?? 0;
    const aliased = await count(`select count(distinct teammate_id)::int as n from emails where workspace_id = $1 and not is_primary`, [workspaceId]);
    const aliases = await count(`select count(*)::int as n from emails where workspace_id = $1 and not is_primary`, [workspaceId]);
    expect(aliased).toBeGreaterThan(0);
    // The first publish listed each mailbox with aliases once; the forced install listed none again.
    expect(listed()).toBe(aliased);
    expect(await count(`select count(*)::int as n from mailbox_install_state where workspace_id = $1`, [workspaceId])).toBe(aliased);
    const [listsBefore, writesBefore] = [listed(), writes()];
    await t.ctx.pool.query(`update signatures set draft_content = jsonb_set(draft_content, '{children,0,tokens,0,value}', '"Warm regards"') where id = $1`, [
      signatureId,
    ]);
    await publish();
    expect(writes() - writesBefore).toBe(200 + aliases);
    expect(listed()).toBe(listsBefore);
    expect(google.signatures()['user1@example.test']).toContain('Warm regards');
  });

  it('a directory change reinstalls only that teammate', async () => {
    const before = writes();
    google.tenant.users[7]!.organizations = [{ title: 'Head of Sales', primary: true }];
    const integ = (await t.ctx.pool.query<{ id: string }>(`select id from integrations where workspace_id = $1 and category = 'teammates'`, [workspaceId]))
      .rows[0]!.id;
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integ], { trigger: 'cli' });
    await executeRun(t.ctx, run!.id, { retry: FAST });
    await drained();
    expect(writes() - before).toBe(1);
    expect(google.signatures()['user7@example.test']).toContain('Head of Sales');
  });

  it('signature.installation.failed fires once across five failed attempts, and again after a success and a new failure', async () => {
    const address = 'user3@example.test';
    const failures = () => eventCount(t.ctx, workspaceId, 'signature.installation.failed');
    const start = await failures();
    google.tenant.noMailbox.add(address);
    for (let i = 0; i < 5; i++) await installOne(address);
    const row = await t.ctx.pool.query(
      `select i.status, i.error_code, i.failing_since from installations i join emails e on e.id = i.email_id where e.address = $1 and i.signature_id = $2`,
      [address, signatureId],
    );
    expect(row.rows[0]).toMatchObject({ status: 'failed', error_code: 'forbidden', failing_since: expect.any(Date) });
    expect((await failures()) - start).toBe(1);
    const ev = await t.ctx.pool.query(
      `select payload from events where workspace_id = $1 and type = 'signature.installation.failed' order by occurred_at desc limit 1`,
      [workspaceId],
    );
    expect(ev.rows[0].payload).toMatchObject({
      type: 'signature.installation.failed',
      error_code: 'forbidden',
      email: { uuid: expect.any(String), address },
      teammate_uuid: expect.any(String),
      signature: { uuid: signatureId, name: 'Standard', kind: 'primary' },
      integration: { uuid: gmail.id, kind: 'google_workspace' },
    });
    google.tenant.noMailbox.delete(address);
    await installOne(address);
    google.tenant.noMailbox.add(address);
    await installOne(address);
    expect((await failures()) - start).toBe(2);
    google.tenant.noMailbox.delete(address);
    await installOne(address);
  });

  it('three workers on one database make one provider write per mailbox and one event per transition', async () => {
    const { openTestContext } = await import('../helpers/db.ts');
    const others = await Promise.all([openTestContext(t.url), openTestContext(t.url)]);
    const runners = await Promise.all(others.map((ctx) => startWorker(ctx, { pollInterval: 50, noCron: true, concurrency: 8 })));
    try {
      const before = new Map(google.writes);
      const eventsBefore = await count(`select count(*)::int as n from events where workspace_id = $1`, [workspaceId]);
      await t.ctx.pool.query(`update signatures set draft_content = jsonb_set(draft_content, '{children,0,tokens,0,value}', '"Thanks"') where id = $1`, [
        signatureId,
      ]);
      await Promise.all(Array.from({ length: 5 }, () => publish()));
      for (let i = 0; i < 200; i++) {
        const a = `user${i}@example.test`;
        expect((google.writes.get(a) ?? 0) - (before.get(a) ?? 0)).toBe(1);
      }
      expect(await count(`select count(*)::int as n from events where workspace_id = $1`, [workspaceId])).toBe(eventsBefore);
    } finally {
      await Promise.all(runners.map((r) => r.stop()));
      await Promise.all(others.map((c) => c.close()));
    }
  });

  it('losing access in the middle of a fan-out stops calls and holds the rest as access_lost; a reconnect resumes them', async () => {
    await t.ctx.pool.query(`update signatures set draft_content = jsonb_set(draft_content, '{children,0,tokens,0,value}', '"Cheers"') where id = $1`, [
      signatureId,
    ]);
    google.knobs.revokeAtRequest = google.counters.requests + 60;
    await publish();
    const lostAt = google.counters.requests;
    expect((await getIntegration(t.ctx.pool, workspaceId, gmail.id))?.status).toBe('access_lost');
    expect(await eventCount(t.ctx, workspaceId, 'integration.access_lost')).toBe(1);
    const held = await count(`select count(*)::int as n from installations where integration_id = $1 and status = 'access_lost'`, [gmail.id]);
    expect(held).toBeGreaterThan(100);
    // No more provider calls once access is lost, whatever else is queued.
    await publish(true);
    expect(google.counters.requests).toBe(lostAt);

    Object.assign(google.knobs, defaultKnobs());
    await withTx(t.ctx.pool, async (c) => updateCredentials(t.ctx, c, (await getIntegration(c, workspaceId, gmail.id))!, googleServiceAccount()));
    await drained();
    expect(
      await count(`select count(*)::int as n from installations where signature_id = $1 and status = 'installed' and last_html like '%Cheers%'`, [signatureId]),
    ).toBe(200);
  });

  it('replay --dry-run explains the install and changes nothing', async () => {
    const before = await t.ctx.pool.query(`select status, updated_at, content_hash from installations order by id`);
    const writesBefore = writes();
    const r = await runCli(['install', 'replay', '--email', 'user5@example.test', '--dry-run', '--json'], {
      DATABASE_URL: t.url,
      ENCRYPTION_KEY: (await import('../helpers/db.ts')).TEST_KEY,
      ALLOW_INSECURE_OUTBOUND_URLS: '1',
    });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ email: 'user5@example.test', dry_run: true, chosen_because: expect.stringMatching(/highest assignment priority/) });
    expect(report.installs[0]).toMatchObject({ outcome: 'dry_run', wouldWrite: true, signatureId });
    expect(report.installs[0].rendered.values).toMatchObject({ job_title: 'Account Executive' });
    expect(writes()).toBe(writesBefore);
    const after = await t.ctx.pool.query(`select status, updated_at, content_hash from installations order by id`);
    expect(after.rows).toEqual(before.rows);
  });

  it('install status lists the installations of an address', async () => {
    const r = await runCli(['install', 'status', '--email', 'user5@example.test'], {
      DATABASE_URL: t.url,
      ENCRYPTION_KEY: (await import('../helpers/db.ts')).TEST_KEY,
      ALLOW_INSECURE_OUTBOUND_URLS: '1',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Standard\s+primary\s+google_workspace\s+installed/);
  });

  it('replay names each destination by name and kind with the rule that chose it, prints no log line, and exits 1 when the install fails; status shows the provider message', async () => {
    const env = { DATABASE_URL: t.url, ENCRYPTION_KEY: (await import('../helpers/db.ts')).TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '1' };
    google.tenant.noMailbox.add('user7@example.test');
    try {
      const r = await runCli(['install', 'replay', '--email', 'user7@example.test'], env);
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toBe('');
      expect(r.stdout).not.toMatch(/^\s*\{/m);
      expect(r.stdout).toContain(`Gmail (google_workspace, ${gmail.id}): failed`);
      expect(r.stdout).toContain('  chosen because no "domains" in its config, and a google_workspace directory lists this teammate');
      expect(r.stdout).toContain('  error forbidden: sendAs.patch: Mail service not enabled');
      const status = await runCli(['install', 'status', '--email', 'user7@example.test'], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/^SIGNATURE\s+KIND\s+PROVIDER\s+STATUS\s+ERROR\s+.*MESSAGE$/m);
      expect(status.stdout).toMatch(/Standard\s+primary\s+google_workspace\s+failed\s+\S+\s+.*Mail service not enabled/);
    } finally {
      google.tenant.noMailbox.delete('user7@example.test');
    }
    const ok = await runCli(['install', 'replay', '--email', 'user7@example.test', '--json'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).installs[0]).toMatchObject({
      outcome: 'installed',
      integration: { name: 'Gmail', kind: 'google_workspace' },
      routing: { rule: 'directory' },
    });
  });

  // Last of the file: after a 429 the integration's shared pace (pace.ts) is lowered, which
  // would slow every install after it.
  it('a 429 with Retry-After reschedules installs instead of failing them', async () => {
    google.knobs.rateLimitNext = 20;
    const limitedBefore = google.counters.rateLimited;
    await t.ctx.pool.query(`update signatures set draft_content = jsonb_set(draft_content, '{children,0,tokens,0,value}', '"Kind regards"') where id = $1`, [
      signatureId,
    ]);
    await publish();
    await waitFor(
      async () =>
        (await count(`select count(*)::int as n from installations where signature_id = $1 and status = 'installed' and last_html like '%Kind regards%'`, [
          signatureId,
        ])) === 200,
      DEADLINE_MS,
      200,
    );
    expect(google.counters.rateLimited).toBeGreaterThan(limitedBefore);
    expect(await count(`select count(*)::int as n from installations where signature_id = $1 and status = 'failed'`, [signatureId])).toBe(0);
    Object.assign(google.knobs, defaultKnobs());
    await drained();
  });

  it('a published signature that no longer validates fails as invalid_content, and its event names the signature, the address and the integration', async () => {
    const address = 'user4@example.test';
    const { rows } = await t.ctx.pool.query<{ id: string; teammate_id: string }>(
      `select id, teammate_id from emails where workspace_id = $1 and address = $2`,
      [workspaceId, address],
    );
    const email = rows[0]!;
    // The published tree names a smart field that does not exist: it no longer validates at render time.
    const broken = {
      type: 'stack',
      id: 'root',
      children: [{ type: 'text', id: 'x', tokens: [{ type: 'textToken', id: 't', smartFieldUuid: crypto.randomUUID() }] }],
    };
    const brokenId = await insertSignature(t.ctx.pool, workspaceId, { name: 'Broken one', draftContent: broken, published: true });
    await assignToTeammate(t.ctx.pool, workspaceId, brokenId, email.teammate_id, 100);
    await installOne(address);
    const ev = await t.ctx.pool.query(
      `select payload from events where workspace_id = $1 and type = 'signature.installation.failed' and payload->'signature'->>'uuid' = $2`,
      [workspaceId, brokenId],
    );
    expect(ev.rows.map((r) => r.payload)).toEqual([
      {
        type: 'signature.installation.failed',
        occurred_at: expect.any(String),
        error_code: 'invalid_content',
        email: { uuid: email.id, address },
        teammate_uuid: email.teammate_id,
        signature: { uuid: brokenId, name: 'Broken one', kind: 'primary' },
        integration: { uuid: gmail.id, kind: 'google_workspace' },
      },
    ]);
  });
});
