/**
 * The preview a support engineer looks at (`sigsync render`) and the signature a mailbox receives
 * (an install into the emulated Gmail) come from one loader, so with several live campaigns they
 * pick the same banner and give the same bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installMailbox } from '../../src/install/install.ts';
import { hashHtml } from '../../src/render/render.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';
import { insertCampaign } from '../helpers/fixtures/campaigns.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const banner = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });

describe('one render input for previews and installs', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let workspaceId: string;
  let gmailId: string;
  let signatureId: string;
  let emailId: string;
  let departmentId: string;

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(1));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    gmailId = (await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' })).id;
    departmentId = await insertSmartField(t.ctx.pool, workspaceId, { label: 'Department', slug: 'department' });
    const teammate = await insertTeammate(t.ctx.pool, workspaceId, {
      displayName: 'Given0 Family0',
      emails: [{ address: 'user0@example.test', primary: true }],
      values: { [departmentId]: 'Sales' },
    });
    emailId = teammate.emailIds[0]!;
    const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Best regards' }] }] };
    signatureId = await insertSignature(t.ctx.pool, workspaceId, { name: 'Main', draftContent: tree, published: true });
    await assignToTeammate(t.ctx.pool, workspaceId, signatureId, teammate.id);
  });
  afterAll(async () => {
    await google?.close();
  });

  /** Two active campaigns on the signature: the older one for Sales, the newer one for `newerFor`. */
  async function campaigns(newerFor: string): Promise<void> {
    await t.ctx.pool.query('delete from marketing_campaigns where workspace_id = $1', [workspaceId]);
    const condition = (value: string) => [[{ smart_field_id: departmentId, values: [value] }]];
    const campaign = (name: string, text: string, conditionValue: string, startedAgo: string) =>
      insertCampaign(t.ctx.pool, workspaceId, {
        name,
        content: banner(text),
        smartFieldsConditions: condition(conditionValue),
        signatureTemplateIds: [signatureId],
        startedAgo,
      });
    await campaign('Older', 'Older banner', 'Sales', '2 hours');
    await campaign('Newer', 'Newer banner', newerFor, '1 hour');
  }

  /** What the mailbox receives, and the hash `sigsync render` prints for the same teammate. */
  async function installedAndPreviewed(): Promise<{ installed: string; previewHash: string; previewBanner: string }> {
    const outcome = await installMailbox(t.ctx, { workspaceId, emailId, kind: 'primary', integrationId: gmailId, forced: true });
    expect(outcome.outcome).toBe('installed');
    const installed = google.signatures()['user0@example.test']!;
    const r = await runCli(['render', '--signature', signatureId, '--email', 'user0@example.test', '--out', '/dev/null'], {
      DATABASE_URL: t.url,
      ENCRYPTION_KEY: TEST_KEY,
    });
    expect(r.code, r.stderr).toBe(0);
    return { installed, previewHash: /sha256\s+([0-9a-f]{64})/.exec(r.stdout)![1]!, previewBanner: /banner\s+(.*)/.exec(r.stdout)![1]! };
  }

  it('two live campaigns that both match: the newest started shows in the preview and in the mailbox, byte for byte', async () => {
    await campaigns('Sales');
    const { installed, previewHash, previewBanner } = await installedAndPreviewed();
    expect(installed).toContain('Newer banner');
    expect(previewBanner).toMatch(/^Newer \(/);
    expect(hashHtml(installed)).toBe(previewHash);
  });

  it('when the newest campaign does not match the teammate, the next one that does shows in both', async () => {
    await campaigns('Engineering');
    const { installed, previewHash, previewBanner } = await installedAndPreviewed();
    expect(installed).toContain('Older banner');
    expect(installed).not.toContain('Newer banner');
    expect(previewBanner).toMatch(/^Older \(/);
    expect(hashHtml(installed)).toBe(previewHash);
  });
});
