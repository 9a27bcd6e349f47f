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
    const q = async (sql: string, params: unknown[]) => (await t.ctx.pool.query<{ id: string }>(sql, params)).rows[0]!.id;
    departmentId = await q(`insert into smart_fields (workspace_id, label, slug) values ($1, 'Department', 'department') returning id`, [workspaceId]);
    const teammateId = await q(`insert into teammates (workspace_id, display_name) values ($1, 'Given0 Family0') returning id`, [workspaceId]);
    emailId = await q(`insert into emails (workspace_id, teammate_id, address, is_primary) values ($1, $2, 'user0@example.test', true) returning id`, [workspaceId, teammateId]);
    await t.ctx.pool.query(`insert into smart_field_values (workspace_id, teammate_id, smart_field_id, value, source) values ($1, $2, $3, 'Sales', 'manual')`, [workspaceId, teammateId, departmentId]);
    const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Best regards' }] }] };
    signatureId = await q(`insert into signatures (workspace_id, name, content, draft_content, last_published_at) values ($1, 'Main', $2, $2, now()) returning id`, [workspaceId, tree]);
    await t.ctx.pool.query(`insert into assignments (workspace_id, signature_id, target_kind, teammate_id, priority) values ($1, $2, 'teammate', $3, 1)`, [workspaceId, signatureId, teammateId]);
  });
  afterAll(async () => {
    await google?.close();
  });

  /** Two active campaigns on the signature: the older one for Sales, the newer one for `newerFor`. */
  async function campaigns(newerFor: string): Promise<void> {
    await t.ctx.pool.query('delete from marketing_campaigns where workspace_id = $1', [workspaceId]);
    const insert = `insert into marketing_campaigns (workspace_id, name, status, content, smart_fields_conditions, signature_template_ids, start_time)
                    values ($1, $2, 'active', $3, $4, $5, now() - $6::interval)`;
    const condition = (value: string) => JSON.stringify([[{ smart_field_id: departmentId, values: [value] }]]);
    await t.ctx.pool.query(insert, [workspaceId, 'Older', banner('Older banner'), condition('Sales'), [signatureId], '2 hours']);
    await t.ctx.pool.query(insert, [workspaceId, 'Newer', banner('Newer banner'), condition(newerFor), [signatureId], '1 hour']);
  }

  /** What the mailbox receives, and the hash `sigsync render` prints for the same teammate. */
  async function installedAndPreviewed(): Promise<{ installed: string; previewHash: string; previewBanner: string }> {
    const outcome = await installMailbox(t.ctx, { workspaceId, emailId, kind: 'primary', integrationId: gmailId, forced: true });
    expect(outcome.outcome).toBe('installed');
    const installed = google.signatures()['user0@example.test']!;
    const r = await runCli(['render', '--signature', signatureId, '--email', 'user0@example.test', '--out', '/dev/null'], { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY });
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
