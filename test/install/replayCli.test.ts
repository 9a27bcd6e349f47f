/**
 * `sigsync install replay` on the mailboxes a support engineer replays: one whose last install
 * failed (the dry run shows that error and its fix, not the whole HTML as added lines), and one
 * with a Slack DM already sent (a real replay does not send it again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'graphile-worker';
import { withTx } from '../../src/db/tx.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { generateSlackTenant, startSlackEmulator, type SlackEmulator } from '../../emulators/slack.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { connectGoogle, publishAndInstall, syncAndAssignToGroups, workspaceWithKey } from '../helpers/fixtures.ts';
import { DEADLINE_MS, runCli, waitFor } from '../helpers/cli.ts';

const tree = { type: 'stack', id: 'root', children: [{ type: 'text', id: 'hi', tokens: [{ type: 'textToken', id: 't', value: 'Best regards' }] }] };

describe('install replay', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let slack: SlackEmulator;
  let runner: Runner;
  const env = () => ({ DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY, ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  const drained = () =>
    waitFor(
      async () =>
        (await t.ctx.pool.query<{ n: number }>(`select count(*)::int as n from graphile_worker.jobs where run_at <= now() + interval '5 seconds'`)).rows[0]!
          .n === 0,
      DEADLINE_MS,
      50,
    );

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(3));
    slack = await startSlackEmulator(generateSlackTenant(3));
    google.tenant.noMailbox.add('user2@example.test');
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    await withTx(t.ctx.pool, (c) =>
      insertIntegration(t.ctx, c, {
        workspaceId,
        kind: 'slack',
        category: 'signatures',
        name: 'Slack',
        credentials: { bot_token: slack.tenant.botToken },
        config: { base_url: `${slack.url}/api/` },
      }),
    );
    const signatureId = await syncAndAssignToGroups(t.ctx, workspaceId, directory.id, tree);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
    await publishAndInstall(t.ctx, workspaceId, signatureId);
    await drained();
    await waitFor(
      async () =>
        (
          await t.ctx.pool.query(
            `select 1 from installations i join emails e on e.id = i.email_id where e.address = 'user2@example.test' and i.status = 'failed'`,
          )
        ).rowCount === 1,
    );
  });
  afterAll(async () => {
    await runner?.stop();
    await google?.close();
    await slack?.close();
  });

  it('a dry run for a failing mailbox shows the last provider error and its fix, not the HTML as added lines', async () => {
    const r = await runCli(['install', 'replay', '--email', 'user2@example.test', '--dry-run'], env());
    expect(r.code, r.stderr).toBe(0);
    const gmail = r.stdout.slice(r.stdout.indexOf('Gmail ('), r.stdout.indexOf('Slack ('));
    expect(gmail).toMatch(/^ {2}last attempt failed \(forbidden\) since \S+, \d+ attempt\(s\): sendAs\.patch: Mail service not enabled/m);
    expect(gmail).toMatch(/^ {2}fix: the provider refuses to change this mailbox/m);
    expect(gmail).toMatch(/^ {2}nothing installed yet to compare with; the rendered HTML is \d+ bytes/m);
    expect(r.stdout).not.toMatch(/^\s+\+/m);
    const json = JSON.parse((await runCli(['install', 'replay', '--email', 'user2@example.test', '--dry-run', '--json'], env())).stdout);
    const install = json.installs.find((i: { integration: { kind: string } }) => i.integration.kind === 'google_workspace');
    expect(install.last_attempt).toMatchObject({ status: 'failed', error_code: 'forbidden', fix: expect.stringMatching(/turn mail on/) });
    expect(install.diff).toBeNull();
  });

  it('a real replay does not send a Slack DM that is already there', async () => {
    expect(slack.dmsTo('user1@example.test')).toHaveLength(1);
    const r = await runCli(['install', 'replay', '--email', 'user1@example.test'], env());
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^Slack \(slack, \S+\): unchanged$/m);
    expect(r.stdout).toContain('the DM with this signature was already sent');
    expect(slack.dmsTo('user1@example.test')).toHaveLength(1);
    // The mailbox setting is written again, as a replay asks.
    expect(r.stdout).toMatch(/^Gmail \(google_workspace, \S+\): installed$/m);
  });
});
