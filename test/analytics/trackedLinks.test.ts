/**
 * Tracked links in installed signatures, through the real install pipeline (graphile-worker, real
 * Postgres, the emulated Gmail tenant on loopback): http(s) links of the signature and of the
 * campaign banner become `/c/{token}` links, mailto/tel stay, republishing writes nothing, and the
 * workspace switch puts the plain links back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Runner } from 'graphile-worker';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { withTx } from '../../src/db/tx.ts';
import { requestSignatureInstall } from '../../src/jobs/triggers.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { switchEventTracking } from '../../src/analytics/tracking.ts';
import { clickTokens, viewTokens } from '../../src/analytics/token.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';
import { DEADLINE_MS, waitFor } from '../helpers/cli.ts';
import { insertCampaign } from '../helpers/fixtures/campaigns.ts';
import { assignToEveryGroup, insertSignature } from '../helpers/fixtures/signatures.ts';

const FAST = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };
const PEOPLE = 12;
const PRICING = 'https://acme.test/pricing?plan=pro&seats=5';

const link = (id: string, value: string, url: string) => ({ type: 'text', id, tokens: [{ type: 'textToken', id: `${id}-t`, value, href: { text: url } }] });

const signatureTree = {
  type: 'stack',
  id: 'root',
  children: [
    link('pricing', 'Pricing', PRICING),
    link('mail', 'Write to us', 'mailto:sales@acme.test'),
    link('phone', 'Call us', 'tel:+15550100'),
    {
      type: 'socialList',
      id: 'social',
      children: [{ type: 'socialListItem', id: 'in', network: 'linkedin', href: { text: 'https://www.linkedin.com/company/acme' } }],
    },
  ],
};
const bannerTree = { type: 'stack', id: 'banner', children: [link('summit', 'Join the summit', 'https://acme.test/summit')] };

describe('tracked links in installed signatures', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  let runner: Runner;
  let workspaceId: string;
  let signatureId: string;
  let campaignId: string;

  const count = async (sql: string, params: unknown[] = []) => (await t.ctx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
  const drained = () =>
    waitFor(
      async () => (await count(`select count(*)::int as n from graphile_worker.jobs where run_at <= now() + interval '5 seconds'`)) === 0,
      DEADLINE_MS,
      50,
    );
  const writes = () => [...google.writes.values()].reduce((a, b) => a + b, 0);
  const publish = async () => {
    await withTx(t.ctx.pool, async (c) => {
      await c.query(`update signatures set content = draft_content, last_published_at = now() where id = $1`, [signatureId]);
      await requestSignatureInstall(c, workspaceId, signatureId, { kinds: ['primary'], forced: false });
    });
    await drained();
  };
  const installed = () => google.signatures()['user1@example.test']!;
  const hrefs = (html: string) => [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]!);

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(PEOPLE));
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    const directory = await connectGoogle(t.ctx, workspaceId, google.url);
    await connectGoogle(t.ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const [run] = await startRuns(t.ctx.pool, workspaceId, [directory.id], { trigger: 'cli' });
    expect((await executeRun(t.ctx, run!.id, { retry: FAST }))?.status).toBe('succeeded');
    signatureId = await insertSignature(t.ctx.pool, workspaceId, { draftContent: signatureTree });
    campaignId = await insertCampaign(t.ctx.pool, workspaceId, {
      name: 'Summit',
      content: bannerTree,
      signatureTemplateIds: [signatureId],
      startedAgo: '1 hour',
    });
    await assignToEveryGroup(t.ctx.pool, workspaceId, signatureId);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
    await drained();
  });
  afterAll(async () => {
    await runner?.stop();
    await google?.close();
  });

  let firstWrites = 0;

  it('without event tracking, installed links are the destinations themselves', async () => {
    await publish();
    firstWrites = writes();
    expect(hrefs(installed())).toEqual([
      PRICING.replace('&', '&amp;'),
      'mailto:sales@acme.test',
      'tel:+15550100',
      'https://www.linkedin.com/company/acme',
      'https://acme.test/summit',
    ]);
    expect(await count('select count(*)::int as n from anchors')).toBe(0);
    // No tracked image and no 1×1 image either.
    expect(installed()).not.toContain('/v/');
    expect(installed()).not.toContain('width="1" height="1"');
    expect(await count('select count(*)::int as n from view_images')).toBe(0);
  });

  it('switching tracking on reinstalls every mailbox with tracked http(s) links; mailto and tel stay', async () => {
    const before = writes();
    expect(await switchEventTracking(t.ctx.pool, workspaceId, true)).toBe(true);
    await drained();
    // Every mailbox (and verified alias) is written once more.
    expect(writes() - before).toBe(firstWrites);
    const links = hrefs(installed());
    const base = `${t.ctx.config.PUBLIC_BASE_URL}/c/`;
    expect(links.filter((h) => h.startsWith(base))).toHaveLength(3);
    expect(links).toContain('mailto:sales@acme.test');
    expect(links).toContain('tel:+15550100');
    expect(installed()).not.toContain('acme.test/pricing');

    // Each token names a link of this address, to the destination that was there.
    const tokens = clickTokens(t.ctx.secrets);
    const { rows } = await t.ctx.pool.query<{ url: string; source_kind: string; address: string }>(
      `select a.url, a.source_kind, e.address from anchor_links l join anchors a on a.id = l.anchor_id join emails e on e.id = l.email_id where l.id = any($1::bigint[]) order by a.url`,
      [links.filter((h) => h.startsWith(base)).map((h) => tokens.verify(h.slice(base.length)))],
    );
    expect(rows).toEqual([
      { url: 'https://acme.test/pricing?plan=pro&seats=5', source_kind: 'signature', address: 'user1@example.test' },
      { url: 'https://acme.test/summit', source_kind: 'campaign', address: 'user1@example.test' },
      { url: 'https://www.linkedin.com/company/acme', source_kind: 'signature', address: 'user1@example.test' },
    ]);
    // One anchor per distinct link of the signature or campaign, one link per anchor and address.
    expect(await count('select count(*)::int as n from anchors where workspace_id = $1', [workspaceId])).toBe(3);
    expect(await count(`select count(*)::int as n from anchors where source_kind = 'campaign' and source_id = $1`, [campaignId])).toBe(1);
    expect(await count('select count(*)::int as n from anchor_links')).toBe(3 * (await count('select count(distinct email_id)::int as n from anchor_links')));

    // The banner shows no image: one 1×1 image is appended, tracked for this address and campaign.
    const images = [...installed().matchAll(/<img src="([^"]*)"[^>]*>/g)].filter((m) => m[1]!.startsWith(`${t.ctx.config.PUBLIC_BASE_URL}/v/`));
    expect(images).toHaveLength(1);
    expect(installed().endsWith(images[0]![0])).toBe(true);
    expect(images[0]![0]).toContain('width="1" height="1" alt=""');
    const imageId = viewTokens(t.ctx.secrets).verify(images[0]![1]!.split('/v/')[1]!);
    const { rows: tracked } = await t.ctx.pool.query(
      `select i.url, i.campaign_id, e.address from view_images i join emails e on e.id = i.email_id where i.id = $1`,
      [imageId],
    );
    expect(tracked).toEqual([{ url: '', campaign_id: campaignId, address: 'user1@example.test' }]);
  });

  it('a republish without a change writes nothing to any mailbox, tracking on', async () => {
    const html = installed();
    const before = writes();
    await publish();
    expect(writes()).toBe(before);
    expect(installed()).toBe(html);
  });

  it('tracked links and images of two addresses differ, of one address are stable', async () => {
    const a = hrefs(installed());
    const pixelOf = (html: string) => /<img src="([^"]*\/v\/[^"]*)"/.exec(html)![1];
    expect(pixelOf(installed())).not.toBe(pixelOf(google.signatures()['user2@example.test']!));
    const b = hrefs(google.signatures()['user2@example.test']!);
    expect(a[0]).not.toBe(b[0]);
    await publish();
    expect(hrefs(installed())).toEqual(a);
  });

  it('switching tracking off puts the destinations back', async () => {
    expect(await switchEventTracking(t.ctx.pool, workspaceId, false)).toBe(true);
    expect(await switchEventTracking(t.ctx.pool, workspaceId, false)).toBe(false);
    await drained();
    expect(hrefs(installed())[0]).toBe(PRICING.replace('&', '&amp;'));
    expect(installed()).not.toContain('/v/');
  });
});
