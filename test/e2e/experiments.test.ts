/**
 * A banner experiment end to end in the sandbox, over real HTTP, Postgres, graphile-worker and the
 * emulated tenants: the sandbox's "Acme" workspace as `npm start` seeds and installs it, an
 * experiment on its demo campaign ("Acme Summit") with two banners.
 *
 * - Starting it gives each teammate one arm (assignArm of the experiment and the teammate), and the
 *   signature each mailbox holds shows that arm's banner: what the emulated Gmail received, and what
 *   the Outlook add-in fetches.
 * - People's clicks on a banner (two on one sender's, the same day), through the real tracked-link
 *   route, count for the arm; a mail gateway's link scanner following every link of a signature
 *   does not.
 * - The API reports per arm (GET /v1/experiments/{id}).
 * - With views kept per person, seeded views and people's clicks (through the analytics owners'
 *   writers: 2% against 0.5% click-through over thousands of exposures per arm, spread over the
 *   senders) are data the statistics decide on: the tick concludes with the better banner, writes
 *   experiment.concluded once with the figures, promotes it (auto_promote), and the installs follow.
 */
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { insertClicks, type Click } from '../../src/analytics/clicks.ts';
import { insertViews, type View } from '../../src/analytics/views.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { assignArm } from '../../src/experiments/assignment.ts';
import { enqueue, jobs } from '../../src/jobs/catalogue.ts';
import { runStory } from '../../src/sandbox/demo.ts';
import { ApiClient, waitForIdle } from '../../src/sandbox/flow.ts';
import { loadAcme, sandboxBannerTree, seedSandbox, type SeededSandbox } from '../../src/sandbox/seed.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { acmePeople, acmeSharedMailboxes, startAcmeEmulators, type AcmeEmulators } from '../../emulators/acme.ts';
import { DEADLINE_MS, waitFor } from '../helpers/cli.ts';
import { useTestContext } from '../helpers/db.ts';
import type { ExperimentView } from '../helpers/experiments.ts';
import { eventCount } from '../helpers/fixtures.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15';
/** Public addresses: a reader's, and a mail gateway's link scanner (which sends a browser's user agent). */
const READER_IP = '81.2.69.142';
const SECOND_READER_IP = '81.2.69.150';
const SCANNER_IP = '81.2.69.160';

const DEMO = loadAcme().campaign;
/** The mailboxes on Microsoft 365 (add-in mode): their signature is what the Outlook add-in fetches. */
const OUTLOOK = new Set([...acmePeople().filter((p) => p.provider === 'microsoft'), ...acmeSharedMailboxes()].map((p) => p.email));
/** What the demo banner's HTML shows as it is (its dash and arrow are written as character references). */
const CONTROL_TEXT = 'Join us at Acme Summit, June 12';
const VARIANT_TEXT = 'Seats for the Acme Summit are going fast.';
const VARIANT = { ...DEMO, text: `${VARIANT_TEXT} `, link_text: 'Book yours', href: 'https://acme.test/summit?banner=seats' };

describe('a banner experiment in the sandbox', () => {
  // No render cache: each add-in fetch reads the signature as it is now. The tests' own client
  // addresses come in X-Forwarded-For from the loopback proxy.
  const t = useTestContext({ ADDIN_CACHE_SECONDS: '0', TRUST_PROXY: '127.0.0.1' });
  let emu: AcmeEmulators;
  let server: FastifyInstance;
  let runner: Runner;
  let api: ApiClient;
  let acme: SeededSandbox;
  let addinKey: string;
  let experiment: ExperimentView;
  /** Each teammate with an address: its id and the arm the experiment gives it. */
  let senders: { id: string; address: string; arm: string }[];

  const get = async () => {
    const r = await api.request<{ data: ExperimentView }>('GET', `/v1/experiments/${experiment.id}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data;
  };
  const addinHtml = async (email: string) => {
    const r = await fetch(`${api.baseUrl}/v1/addin/signature?email=${encodeURIComponent(email)}&platform=web&client_version=20260101001.01`, {
      headers: { authorization: `Bearer ${addinKey}` },
    });
    expect(r.status, email).toBe(200);
    return ((await r.json()) as { data: { html: string } }).data.html;
  };
  /** The tracked address of the link whose text is `text`, in installed HTML, as a path of this server. */
  const linkTo = (html: string, text: string) => {
    const m = new RegExp(`<a href="(https?://[^"]*/c/[^"]+)"[^>]*>(?:(?!</a>)[\\s\\S])*${text}`).exec(html);
    return m ? new URL(m[1]!).pathname : undefined;
  };
  /** The campaign tick (which analyses running experiments), run by the worker as its crontab runs it. */
  const tick = async () => {
    await enqueue(t.ctx.pool, jobs.campaignTick, {});
    const left = async () =>
      (await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from graphile_worker.jobs where task_identifier = $1', [jobs.campaignTick.name]))
        .rows[0]!.n;
    await waitFor(async () => (await left()) === 0, DEADLINE_MS, 50);
  };
  const follow = async (path: string | undefined, userAgent: string, ip: string) => {
    expect(path, 'a tracked link in the installed signature').toBeDefined();
    const r = await fetch(`${api.baseUrl}${path}`, { redirect: 'manual', headers: { 'user-agent': userAgent, 'x-forwarded-for': ip } });
    expect(r.status, path).toBe(302);
    return new URL(r.headers.get('location')!).searchParams.get('click_id')!;
  };

  beforeAll(async () => {
    emu = await startAcmeEmulators();
    acme = await seedSandbox(t.ctx, emu);
    server = await buildServer(t.ctx);
    api = new ApiClient(await server.listen({ host: '127.0.0.1', port: 0 }), acme.apiKey);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 8 });
    addinKey = (await createApiKey(t.ctx.pool, acme.workspaceId, 'sandbox Outlook add-in', 'addin')).key;
    await runStory(t.ctx, t.ctx.logger, api, acme.workspaceId, acme.signatureId, false);
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    await emu?.close();
  });

  it("assigns each sender one arm, and each installed signature shows its arm's banner", async () => {
    // Before: every Gmail mailbox shows the demo banner.
    const shown = Object.values(emu.google.signatures()).filter(Boolean);
    expect(shown.length).toBeGreaterThan(10);
    for (const html of shown) expect(html).toContain(CONTROL_TEXT);
    const body = {
      experiment: {
        name: 'Summit banner: urgency',
        mode: 'ab',
        auto_promote: true,
        arms: [
          { name: 'Summit', content: sandboxBannerTree(DEMO) },
          { name: 'Seats', content: sandboxBannerTree(VARIANT) },
        ],
      },
    };
    const created = await api.request<{ data: ExperimentView }>('POST', `/v1/marketing_campaigns/${acme.campaignId}/experiments`, body);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    experiment = created.body.data;
    const started = await api.request<{ data: ExperimentView }>('POST', `/v1/experiments/${experiment.id}/start`);
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.data.status).toBe('running');
    experiment = started.body.data;
    await waitForIdle(t.ctx.pool);

    const arms = experiment.arms.map((a) => ({ id: a.id, weight: a.weight }));
    const { rows } = await t.ctx.pool.query<{ id: string; address: string }>(
      `select t.id, e.address from teammates t join emails e on e.teammate_id = t.id where t.workspace_id = $1 and t.deleted_at is null order by e.address`,
      [acme.workspaceId],
    );
    senders = rows.map((r) => ({ ...r, arm: assignArm(experiment.id, r.id, arms) }));
    const [control, variant] = experiment.arms.map((a) => a.id);
    const textOf = (arm: string) => (arm === variant ? VARIANT_TEXT : CONTROL_TEXT);

    // Gmail: what the emulated tenant received for each mailbox.
    const gmail = emu.google.signatures();
    const inGmail = senders.filter((s) => gmail[s.address]);
    expect(inGmail.length).toBeGreaterThan(10);
    for (const s of inGmail) {
      expect(gmail[s.address], s.address).toContain(textOf(s.arm));
      expect(gmail[s.address], s.address).not.toContain(textOf(s.arm === variant ? control! : variant!));
    }
    // Both arms are in the mailboxes (a split of some 13 mailboxes all into one arm would be 1 in 4,000).
    expect(new Set(inGmail.map((s) => s.arm))).toEqual(new Set([control, variant]));
    // Outlook (add-in mode): what the add-in inserts for each mailbox.
    const outlook = senders.filter((s) => OUTLOOK.has(s.address));
    expect(outlook.length).toBeGreaterThan(5);
    for (const s of outlook) expect(await addinHtml(s.address), s.address).toContain(textOf(s.arm));
  });

  it("counts people's clicks on a banner for its arm, not a link scanner's, and reports per arm", async () => {
    const [, variant] = experiment.arms.map((a) => a.id);
    const gmail = emu.google.signatures();
    const inB = senders.filter((s) => s.arm === variant && gmail[s.address]);
    expect(inB.length).toBeGreaterThanOrEqual(2);
    const [reader, scanned] = inB;
    // Two people read reader's mail (one message to two recipients, the same day) and follow the banner:
    // one sender's signature can bring more clicks than it has sender-days (the analysis is still answered).
    const humans = [
      await follow(linkTo(gmail[reader!.address]!, VARIANT.link_text), CHROME, READER_IP),
      await follow(linkTo(gmail[reader!.address]!, VARIANT.link_text), FIREFOX, SECOND_READER_IP),
    ];
    // A gateway's link scanner opens every link of scanned's signature within a second, with a browser's user agent.
    const scanner = [
      await follow(linkTo(gmail[scanned!.address]!, VARIANT.link_text), SAFARI, SCANNER_IP),
      await follow(linkTo(gmail[scanned!.address]!, 'acme.test'), SAFARI, SCANNER_IP),
    ];
    const classes = await waitFor(
      async () => {
        const { rows } = await t.ctx.pool.query<{ id: string; traffic_class: string }>(
          'select id, traffic_class from clicks where workspace_id = $1 and id = any($2::text[])',
          [acme.workspaceId, [...humans, ...scanner]],
        );
        return rows.length === 4 ? Object.fromEntries(rows.map((r) => [r.id, r.traffic_class])) : undefined;
      },
      DEADLINE_MS,
      100,
    );
    expect(classes).toEqual({ [humans[0]!]: 'human', [humans[1]!]: 'human', [scanner[0]!]: 'scanner', [scanner[1]!]: 'scanner' });

    const x = await get();
    expect(x.exposure).toBe('sender_days');
    expect(x.results.arms.map((a) => a.id)).toEqual(experiment.arms.map((a) => a.id));
    // With sender-days, a click counts as the sender-day it fell on: the two clicks are one clicked day.
    expect(x.results.arms.map((a) => a.clicks)).toEqual([0, 1]);
    // Each arm's senders are teammates the assignment gave it, and every Gmail mailbox's sender is counted.
    for (const [i, arm] of experiment.arms.entries()) {
      const shown = senders.filter((s) => s.arm === arm.id && gmail[s.address]).length;
      expect(x.results.arms[i]!.senders).toBeGreaterThanOrEqual(shown);
      expect(x.results.arms[i]!.senders).toBeLessThanOrEqual(senders.filter((s) => s.arm === arm.id).length);
      // Since the start, each shown sender is one sender-day.
      expect(x.results.arms[i]!.exposures).toBe(x.results.arms[i]!.senders);
    }
  });

  it('on data that decides, the tick concludes with the better banner, promotes it, and the installs follow', async () => {
    // Views per person: an exposure is a person's view of the signature.
    const privacy = await api.request('PATCH', '/v1/workspace/privacy_settings', { privacy_settings: { views_tracking: 'per_person' } });
    expect(privacy.status, JSON.stringify(privacy.body)).toBe(200);
    const [control, variant] = experiment.arms.map((a) => a.id) as [string, string];
    const seeded = { [control]: await seedArm(control, 0.005), [variant]: await seedArm(variant, 0.02) };

    const before = await get();
    expect(before.exposure).toBe('human_views');
    for (const [i, arm] of [control, variant].entries()) {
      expect(before.results.arms[i]!.exposures, arm).toBe(seeded[arm]!.views);
      expect(before.results.arms[i]!.clicks, arm).toBe(seeded[arm]!.clicks + (arm === variant ? 2 : 0));
    }
    expect(before.results.srm.mismatch).toBe(false);

    await tick();
    const after = await get();
    if (after.results.decision.status !== 'winner') {
      // Only the placeholder of the statistics (before the real analysis is merged) may leave it undecided.
      expect(after.results.decision.reason).toBe('the statistics are not in this build yet');
      expect(after.status).toBe('running');
      expect(await eventCount(t.ctx, acme.workspaceId, 'experiment.concluded')).toBe(0);
      return;
    }
    expect(after).toMatchObject({ status: 'concluded', winner_arm_id: variant, promoted_arm_id: variant });
    expect(after.results.decision.winner).toBe(variant);
    expect(after.results.decision.reason.length).toBeGreaterThan(0);
    const events = await t.ctx.pool.query<{ payload: { experiment: { uuid: string; winner_arm_uuid: string }; results: unknown } }>(
      `select payload from events where workspace_id = $1 and type = 'experiment.concluded'`,
      [acme.workspaceId],
    );
    expect(events.rows).toHaveLength(1);
    expect(events.rows[0]!.payload.experiment).toMatchObject({ uuid: experiment.id, winner_arm_uuid: variant });
    expect(events.rows[0]!.payload.results).toEqual(after.results);
    // Another tick changes nothing and sends nothing more.
    await tick();
    expect(await eventCount(t.ctx, acme.workspaceId, 'experiment.concluded')).toBe(1);

    // The campaign continues with the winner's banner, in every mailbox.
    const campaigns = await api.request<{ data: { id: string; content: unknown }[] }>('GET', '/v1/marketing_campaigns?per_page=100');
    expect(campaigns.body.data.find((c) => c.id === acme.campaignId)?.content).toEqual(sandboxBannerTree(VARIANT));
    await waitForIdle(t.ctx.pool);
    const gmail = emu.google.signatures();
    for (const s of senders.filter((x) => gmail[x.address])) {
      expect(gmail[s.address], s.address).toContain(VARIANT_TEXT);
      expect(gmail[s.address], s.address).not.toContain(CONTROL_TEXT);
    }
    for (const s of senders.filter((x) => OUTLOOK.has(x.address))) expect(await addinHtml(s.address), s.address).toContain(VARIANT_TEXT);
  });

  /**
   * Seeds an arm's data through the analytics owners' writers: for each sender the arm was rendered
   * for, views of people on its tracked image and people's clicks on its banner link, at `rate`
   * (each sender's own rate drawn around it: senders are clusters), some 6,000 views per arm.
   */
  async function seedArm(arm: string, rate: number): Promise<{ views: number; clicks: number }> {
    const images = await t.ctx.pool.query<{ id: string; teammate_id: string }>(
      `select id, teammate_id from view_images where workspace_id = $1 and arm_id = $2`,
      [acme.workspaceId, arm],
    );
    const links = await t.ctx.pool.query<{ id: string; anchor_id: string; signature_id: string; email_id: string; teammate_id: string }>(
      `select l.id, l.anchor_id, l.signature_id, l.email_id, l.teammate_id from anchor_links l join anchors a on a.id = l.anchor_id where a.workspace_id = $1 and a.arm_id = $2`,
      [acme.workspaceId, arm],
    );
    const perImage = Math.ceil(6000 / images.rows.length);
    // Between the start and now: the analysis counts what happened since the experiment started.
    const started = Date.parse(experiment.started_at!);
    const span = Math.max(1, Date.now() - started - 2000);
    const at = (i: number) => new Date(started + 1000 + ((i * 7919) % span));
    const views: View[] = [];
    const clicks: Click[] = [];
    for (const [n, image] of images.rows.entries()) {
      for (let i = 0; i < perImage; i++)
        views.push({
          id: crypto.randomUUID(),
          viewedAt: at(i),
          imageId: image.id,
          countryCode: 'GB',
          viewer: `reader-${n}-${i}`,
          proxy: null,
          botReason: null,
          trafficClass: 'human',
        });
      const link = links.rows.find((l) => l.teammate_id === image.teammate_id);
      if (!link) continue;
      // Senders differ: some a little above the arm's rate, some below.
      const own = Math.round(perImage * rate * (n % 2 === 0 ? 1.2 : 0.8));
      for (let i = 0; i < own; i++)
        clicks.push({
          id: crypto.randomUUID(),
          clickedAt: at(i),
          linkId: link.id,
          anchorId: link.anchor_id,
          signatureId: link.signature_id,
          emailId: link.email_id,
          countryCode: 'GB',
          clicker: `reader-${n}-${i}`,
          isBot: false,
          botReason: null,
          trafficClass: 'human',
        });
    }
    for (let i = 0; i < views.length; i += 2000) await insertViews(t.ctx.pool, views.slice(i, i + 2000));
    for (let i = 0; i < clicks.length; i += 2000) await insertClicks(t.ctx.pool, clicks.slice(i, i + 2000));
    return { views: views.length, clicks: clicks.length };
  }
});
