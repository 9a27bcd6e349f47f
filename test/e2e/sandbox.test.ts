/**
 * End to end through the public API, the worker, Postgres and the real provider SDKs against the
 * loopback emulators (Google over HTTP, Microsoft Graph over HTTPS with its generated certificate,
 * Slack): no request interception anywhere. Outlook is in add-in mode, as in a default tenant: nothing
 * is written to the emulated mailboxes, and each mailbox's signature is read as the add-in reads it
 * (GET /v1/addin/signature with the sandbox's add-in key), which turns its installations `installed`.
 */
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { applyAction, runCampaignTick } from '../../src/campaigns/campaigns.ts';
import { withTx } from '../../src/db/tx.ts';
import { getIntegration, updateCredentials } from '../../src/integrations/integrations.ts';
import { ApiClient, waitForIdle, waitForRuns } from '../../src/sandbox/flow.ts';
import { defaultKnobs } from '../../emulators/http.ts';
import { microsoftCredentials } from '../../emulators/microsoft.ts';
import {
  connectSandbox,
  createSandboxCampaign,
  createSandboxSignature,
  everyoneGroups,
  loadAcme,
  mapSandboxSmartFields,
  type SandboxIntegrationKey,
} from '../../src/sandbox/seed.ts';
import { acmePeople, acmeSharedMailboxes, microsoftUserOf, slackMemberOf, startAcmeEmulators, type AcmeEmulators } from '../../emulators/acme.ts';
import { startWorker } from '../../src/worker/runner.ts';
import type { IntegrationRow } from '../../src/integrations/integrations.ts';
import { useTestContext } from '../helpers/db.ts';
import { eventCount, workspaceWithKey } from '../helpers/fixtures.ts';

const PEOPLE = acmePeople();
const GOOGLE_PEOPLE = PEOPLE.filter((p) => p.provider === 'google');
const MS_PEOPLE = PEOPLE.filter((p) => p.provider === 'microsoft');
const NO_GMAIL = GOOGLE_PEOPLE.find((p) => p.no_mailbox)!.email;
/** The Microsoft tenant's shared mailbox: a teammate too, signed in its mailbox, and DMed nowhere. */
const SHARED = acmeSharedMailboxes();
const TEAMMATES = PEOPLE.length + SHARED.length;

const OUTLOOK_KINDS = ['internal', 'primary', 'reply'];

interface AddinAnswer {
  html: string;
  variants: Record<string, { html: string }>;
}

describe('sandbox end to end', () => {
  // No render cache: each add-in fetch below reads the signature as it is now.
  const t = useTestContext({ ADDIN_CACHE_SECONDS: '0' });
  let emu: AcmeEmulators;
  let server: FastifyInstance;
  let runner: Runner;
  let api: ApiClient;
  let workspaceId: string;
  let integrations: Record<SandboxIntegrationKey, IntegrationRow>;
  let signatureId: string;
  let addinKey: string;

  const count = async (sql: string, params: unknown[] = []) => (await t.ctx.pool.query<{ n: number }>(sql, params)).rows[0]!.n;
  const sync = async () => {
    const runs = await waitForRuns(t.ctx.pool, await api.sync());
    await waitForIdle(t.ctx.pool);
    return runs;
  };
  const teammates = () => count(`select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null`, [workspaceId]);
  const snapshot = () => ({ gmail: new Map(emu.google.writes), dms: emu.slack.dms.length });
  /** The address's signature as the Outlook add-in on the web fetches it. */
  const addinFetch = async (email: string): Promise<AddinAnswer> => {
    const r = await fetch(`${api.baseUrl}/v1/addin/signature?email=${encodeURIComponent(email)}&platform=web&client_version=20260101001.01`, {
      headers: { authorization: `Bearer ${addinKey}` },
    });
    expect(r.status, email).toBe(200);
    return ((await r.json()) as { data: AddinAnswer }).data;
  };
  /** Each Outlook installation: `address kind status`. */
  const outlookInstalls = async () =>
    (
      await t.ctx.pool.query<{ row: string }>(
        `select e.address || ' ' || i.kind || ' ' || i.status as row from installations i join emails e on e.id = i.email_id where i.workspace_id = $1 and i.integration_id = $2 order by 1`,
        [workspaceId, integrations.outlook.id],
      )
    ).rows.map((r) => r.row);
  const every = (emails: string[], status: string) => emails.flatMap((e) => OUTLOOK_KINDS.map((k) => `${e} ${k} ${status}`)).sort();
  const diff = (before: Map<string, number>, after: Map<string, number>) =>
    [...after.entries()]
      .filter(([k, v]) => v !== (before.get(k) ?? 0))
      .map(([k]) => k)
      .sort();

  beforeAll(async () => {
    emu = await startAcmeEmulators();
    let key: string;
    ({ workspaceId, key } = await workspaceWithKey(t.ctx));
    server = await buildServer(t.ctx);
    api = new ApiClient(await server.listen({ host: '127.0.0.1', port: 0 }), key);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 8 });
    addinKey = (await createApiKey(t.ctx.pool, workspaceId, 'sandbox Outlook add-in', 'addin')).key;
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    await emu?.close();
  });

  it('connect → sync → assign → publish: installed in Gmail, fetched by the Outlook add-in, DMed in Slack', async () => {
    integrations = await connectSandbox(t.ctx, workspaceId, emu);
    const fields = await mapSandboxSmartFields(t.ctx, workspaceId, integrations);
    signatureId = await createSandboxSignature(t.ctx, workspaceId, fields);

    const runs = await sync();
    expect(runs.map((r) => [r.integration, r.status, r.mode, r.created])).toEqual([
      ['Google Workspace (sandbox)', 'succeeded', 'full', GOOGLE_PEOPLE.length],
      ['Microsoft Entra ID (sandbox)', 'succeeded', 'full', MS_PEOPLE.length + SHARED.length],
    ]);
    expect(await teammates()).toBe(TEAMMATES);
    expect(await count(`select count(*)::int as n from teammates where workspace_id = $1 and shared_mailbox and deleted_at is null`, [workspaceId])).toBe(
      SHARED.length,
    );

    await api.assignGroups(signatureId, await everyoneGroups(t.ctx, workspaceId));
    await api.publish(signatureId);
    await waitForIdle(t.ctx.pool);

    const gmail = emu.google.signatures();
    for (const p of GOOGLE_PEOPLE.filter((x) => !x.no_mailbox)) {
      expect(gmail[p.email], p.email).toContain(p.title);
      expect(gmail[p.email]).toContain(p.phone);
    }
    expect(gmail[NO_GMAIL]).toBeFalsy();
    // Outlook in add-in mode: nothing pushed to a mailbox; the published signature waits for the add-in,
    // whose first fetch installs every variant it inserts (none is `not_supported`).
    const outlookMailboxes = [...MS_PEOPLE, ...SHARED].map((p) => p.email);
    expect(emu.microsoft.writes.size).toBe(0);
    expect(await outlookInstalls()).toEqual(outlookMailboxes.map((e) => `${e} primary pending`).sort());
    for (const p of [...MS_PEOPLE, ...SHARED]) {
      const got = await addinFetch(p.email);
      expect(got.html, p.email).toContain(p.title);
      expect(Object.keys(got.variants).sort(), p.email).toEqual(OUTLOOK_KINDS);
      expect(got.variants.reply!.html, p.email).toContain(p.phone);
      expect(got.variants.internal!.html, p.email).toContain(p.title);
    }
    expect(await outlookInstalls()).toEqual(every(outlookMailboxes, 'installed'));
    const clients = await t.ctx.pool.query<{ platform: string; n: number }>(
      `select platform, count(distinct email_id)::int as n from addin_clients where workspace_id = $1 group by platform`,
      [workspaceId],
    );
    expect(clients.rows).toEqual([{ platform: 'web', n: outlookMailboxes.length }]);
    for (const p of PEOPLE) {
      const dms = emu.slack.dmsTo(p.email);
      expect(dms, p.email).toHaveLength(1);
      expect(JSON.stringify(dms[0]!.blocks)).toContain(p.title);
    }
    for (const m of SHARED) expect(emu.slack.dmsTo(m.email), m.email).toHaveLength(0);
    const failed = await t.ctx.pool.query(
      `select e.address, i.error_code from installations i join emails e on e.id = i.email_id where i.workspace_id = $1 and i.status = 'failed'`,
      [workspaceId],
    );
    expect(failed.rows).toEqual([{ address: NO_GMAIL, error_code: 'forbidden' }]);
  });

  it('a title changed in the directory reaches only that teammate’s mailboxes on the next sync', async () => {
    const g = GOOGLE_PEOPLE[2]!;
    const m = MS_PEOPLE[3]!;
    const before = snapshot();
    emu.google.tenant.users.find((u) => u.primaryEmail === g.email)!.organizations = [
      { title: 'Head of Partnerships', department: g.department, primary: true },
    ];
    emu.microsoft.updateUser(emu.microsoft.tenant.users.find((u) => u.mail === m.email)!.id, { jobTitle: 'Principal Engineer' });

    const runs = await sync();
    expect(runs.find((r) => r.integration.startsWith('Microsoft'))).toMatchObject({ status: 'succeeded', mode: 'delta', seen: 1, updated: 1 });
    expect(diff(before.gmail, emu.google.writes)).toEqual([g.email]);
    // The changed Outlook mailbox waits for the add-in again; the others keep what their add-in holds.
    expect((await outlookInstalls()).filter((r) => r.endsWith(' pending'))).toEqual([`${m.email} internal pending`, `${m.email} primary pending`]);
    expect(
      emu.slack.dms
        .slice(before.dms)
        .map((d) => d.email)
        .sort(),
    ).toEqual([g.email, m.email].sort());
    expect(emu.google.signatures()[g.email]).toContain('Head of Partnerships');
    expect((await addinFetch(m.email)).html).toContain('Principal Engineer');
    expect((await outlookInstalls()).filter((r) => !r.endsWith(' installed'))).toEqual([]);
  });

  it('a revoked token → access_lost once → reconnect → recovery', async () => {
    const ms = integrations.microsoftDirectory;
    emu.microsoft.knobs.revokeAtRequest = emu.microsoft.counters.requests + 1;
    const first = await sync();
    expect(first.find((r) => r.integration.startsWith('Microsoft'))).toMatchObject({ status: 'failed', error_code: 'access_lost' });
    expect((await getIntegration(t.ctx.pool, workspaceId, ms.id))?.status).toBe('access_lost');
    // A second sync leaves the lost integration out: no second event.
    const second = await sync();
    expect(second.map((r) => r.integration)).toEqual(['Google Workspace (sandbox)']);
    expect(await eventCount(t.ctx, workspaceId, 'integration.access_lost')).toBe(1);
    expect(await teammates()).toBe(TEAMMATES);

    Object.assign(emu.microsoft.knobs, defaultKnobs());
    await withTx(t.ctx.pool, async (c) =>
      updateCredentials(t.ctx, c, (await getIntegration(c, workspaceId, ms.id))!, microsoftCredentials(emu.microsoft.tenant)),
    );
    emu.microsoft.updateUser(emu.microsoft.tenant.users[0]!.id, { jobTitle: 'Managing Director, Europe' });
    const after = await sync();
    expect(after.find((r) => r.integration.startsWith('Microsoft'))).toMatchObject({ status: 'succeeded' });
    expect((await getIntegration(t.ctx.pool, workspaceId, ms.id))?.status).toBe('active');
    expect((await addinFetch(MS_PEOPLE[0]!.email)).html).toContain('Managing Director, Europe');
    expect(await eventCount(t.ctx, workspaceId, 'integration.access_lost')).toBe(1);
  });

  it('an expired delta token → a full listing → nothing lost', async () => {
    const newcomer = { ...MS_PEOPLE[0]!, given_name: 'Nadia', family_name: 'Petrova', email: 'nadia.petrova@eu.acme.test', title: 'Account Manager' };
    const user = microsoftUserOf(newcomer, 90);
    emu.microsoft.addUser(user);
    emu.microsoft.tenant.groups[0]!.members.push(user.id);
    emu.slack.addMember(slackMemberOf(newcomer, 90));
    emu.microsoft.expireDeltaTokens();
    const listedBefore = emu.microsoft.counters.byRoute['users.list'] ?? 0;

    const runs = await sync();
    const run = runs.find((r) => r.integration.startsWith('Microsoft'))!;
    expect(run).toMatchObject({ status: 'succeeded', mode: 'full', created: 1, deleted: 0 });
    expect(emu.microsoft.counters.byRoute['users.list']! - listedBefore).toBeGreaterThan(0);
    expect(await teammates()).toBe(TEAMMATES + 1);
    expect((await outlookInstalls()).filter((r) => r.startsWith(`${newcomer.email} `))).toEqual(every([newcomer.email], 'pending'));
    expect((await addinFetch(newcomer.email)).html).toContain('Account Manager');
    // The next round is a delta round again, from the token the full listing saved.
    const next = await sync();
    expect(next.find((r) => r.integration.startsWith('Microsoft'))).toMatchObject({ status: 'succeeded', mode: 'delta', seen: 0 });
  });

  it('a campaign start installs banners and its end removes them', async () => {
    const campaignId = await createSandboxCampaign(t.ctx, workspaceId, signatureId);
    const start = new Date();
    const end = new Date(start.getTime() + 3600_000);
    await t.ctx.pool.query(`update marketing_campaigns set start_time = $2, end_time = $3 where id = $1`, [campaignId, start, end]);
    await waitForIdle(t.ctx.pool);
    const banner = loadAcme().campaign.href;
    // Gmail's mailboxes, and what the add-in inserts in each Outlook mailbox (the newcomer's too).
    const outlookMailboxes = [...MS_PEOPLE, ...SHARED].map((p) => p.email).concat('nadia.petrova@eu.acme.test');
    const installedEverywhere = async (contains: boolean) => {
      const outlook = await Promise.all(outlookMailboxes.map(async (e) => (await addinFetch(e)).html));
      const all = [...Object.values(emu.google.signatures()).filter(Boolean), ...outlook];
      expect(all.length).toBe(GOOGLE_PEOPLE.length - 1 + outlookMailboxes.length);
      for (const html of all) expect(html.includes(banner)).toBe(contains);
      expect(await outlookInstalls()).toEqual(every(outlookMailboxes, 'installed'));
    };
    await installedEverywhere(false);

    const moved = await withTx(t.ctx.pool, (c) => applyAction(c, workspaceId, campaignId, 'schedule', new Date(start.getTime() + 1000)));
    expect(moved?.status).toBe('active');
    await waitForIdle(t.ctx.pool);
    await installedEverywhere(true);

    const tick = await runCampaignTick(t.ctx.pool, new Date(end.getTime() + 1000));
    expect(tick.ended).toBe(1);
    await waitForIdle(t.ctx.pool);
    // Back to the version the add-in fetched before the campaign: pending until the add-in fetches it again,
    // and that fetch installs it again.
    expect((await outlookInstalls()).filter((r) => !r.endsWith(' installed'))).toEqual(outlookMailboxes.map((e) => `${e} primary pending`).sort());
    await installedEverywhere(false);
    expect(await eventCount(t.ctx, workspaceId, 'campaign.ended')).toBe(1);
  });
});
