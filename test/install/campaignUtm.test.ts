/**
 * A campaign's UTM parameters reach the mailbox: the installed banner's web links carry them, and
 * with event tracking on, the tracked link's destination (where the click redirect leads) does too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { switchEventTracking } from '../../src/analytics/tracking.ts';
import { createCampaign } from '../../src/campaigns/campaigns.ts';
import { installMailbox } from '../../src/install/install.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const SUMMIT = 'https://acme.test/summit';
const TAGS = 'utm_source=signature&utm_campaign=summit%202027';
const banner = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Join the summit', href: { text: SUMMIT } }] }] };
const hrefs = (html: string) => [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

describe('campaign UTM parameters in installed signatures', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let workspaceId: string;
  let gmailId: string;
  let emailId: string;

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(1));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    gmailId = (await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' })).id;
    const teammate = await insertTeammate(t.ctx.pool, workspaceId, {
      displayName: 'Given0 Family0',
      emails: [{ address: 'user0@example.test', primary: true }],
    });
    emailId = teammate.emailIds[0]!;
    const tree = { type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Best regards' }] }] };
    const signatureId = await insertSignature(t.ctx.pool, workspaceId, { name: 'Main', draftContent: tree, published: true });
    await assignToTeammate(t.ctx.pool, workspaceId, signatureId, teammate.id);
    await createCampaign(t.ctx.pool, workspaceId, {
      name: 'Summit',
      status: 'active',
      startTime: new Date(Date.now() - 3600_000),
      content: banner,
      signatureIds: [signatureId],
      utm: { source: 'signature', campaign: 'summit 2027' },
    });
  });
  afterAll(async () => {
    await google?.close();
  });

  const install = async () => {
    const outcome = await installMailbox(t.ctx, { workspaceId, emailId, kind: 'primary', integrationId: gmailId, forced: true });
    expect(outcome.outcome).toBe('installed');
    return google.signatures()['user0@example.test']!;
  };

  it('the installed banner link carries the campaign parameters', async () => {
    expect(hrefs(await install())).toEqual([`${SUMMIT}?${TAGS}`]);
  });

  it('with tracking on, the tracked link leads to the destination with the parameters', async () => {
    await switchEventTracking(t.ctx.pool, workspaceId, true);
    const links = hrefs(await install());
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(new RegExp(`^${t.ctx.config.PUBLIC_BASE_URL}/c/`));
    const { rows } = await t.ctx.pool.query<{ url: string; source_kind: string }>('select url, source_kind from anchors where workspace_id = $1', [
      workspaceId,
    ]);
    expect(rows).toEqual([{ url: `${SUMMIT}?${TAGS}`, source_kind: 'campaign' }]);
  });
});
