/**
 * The compatibility report in the API (beyond the spec): GET /v1/signatures/{id}/compatibility, and
 * the warnings POST and PATCH /v1/signatures answer beside `data`. One test per message kind (new
 * messages, replies, messages to colleagues), the banner, the clients of the workspace's installs,
 * and the size budgets.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { installMailbox } from '../../src/install/install.ts';
import { assignToTeammate } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { insertSmartFieldValue } from '../helpers/fixtures/teammates.ts';
import { workspaceWithKey } from '../helpers/fixtures/workspaces.ts';
import { FOREIGN_UUID, seedIntegration, seedTeammate, useApi } from './helpers.ts';

/** A signature whose text is see-through navy and links to the website. */
function seeThrough(text: string, color = 'rgba(11, 37, 69, 0.5)') {
  return {
    type: 'stack',
    children: [
      { type: 'text', tokens: [{ type: 'textToken', value: text, textStyle: { color } }] },
      { type: 'text', tokens: [{ type: 'textToken', value: 'acme.test', href: { text: 'https://acme.test/' } }] },
    ],
  };
}

const plain = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });

const OUTLOOK_SEE_THROUGH = 'In Outlook for Windows, the see-through text colour rgba(11,37,69,0.5) of the signature shows as the solid #8592a2.';

describe('signature compatibility (API extension)', () => {
  const api = useApi();

  it("a draft write answers the spec's {data} and, beside it, warnings in plain words; never an error", async () => {
    const r = await api.call('POST', '/v1/signatures', { signature: { name: 'See-through', draft_content: seeThrough('Ada Lovelace') } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'warnings']);
    expect(r.body.data).toMatchObject({ name: 'See-through', draft_content: seeThrough('Ada Lovelace') });
    expect(r.body.warnings).toContainEqual({
      code: 'client_support',
      kind: 'primary',
      part: 'signature',
      clients: ['outlook.windows'],
      message: OUTLOOK_SEE_THROUGH,
      side: 'sender',
    });

    // PATCH to an opaque colour: the see-through warning goes.
    const p = await api.call('PATCH', `/v1/signatures/${r.body.data.id}`, { signature: { draft_content: seeThrough('Ada Lovelace', '#0b2545') } });
    expect(p.status).toBe(200);
    expect(p.body.warnings.map((w: { message: string }) => w.message)).not.toContain(OUTLOOK_SEE_THROUGH);
    expect(p.body.warnings.every((w: { code: string }) => w.code === 'client_support')).toBe(true);
  });

  it('primary (new messages): the report lists every client when no install destination is known, and the three size budgets', async () => {
    const s = await api.call('POST', '/v1/signatures', { signature: { name: 'Primary', draft_content: seeThrough('Grace Hopper') } });
    const r = await api.call('GET', `/v1/signatures/${s.body.data.id}/compatibility`);
    expect(r.status).toBe(200);
    const report = r.body.data;
    expect(report.clients_from).toBe('all');
    expect(report.clients.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining(['gmail.desktop-webmail', 'outlook.windows', 'outlook.outlook-com', 'apple-mail.ios', 'yahoo.desktop-webmail']),
    );
    expect(report.kinds.map((k: { kind: string }) => k.kind)).toEqual(['primary']);
    const [primary] = report.kinds;
    expect(primary.banner).toBeNull();
    expect(primary.issues).toContainEqual(
      expect.objectContaining({ part: 'signature', clients: ['outlook.windows'], message: OUTLOOK_SEE_THROUGH, feature: 'rgba()', support: 'none' }),
    );
    // The Gmail apps underline links for mailboxes that are not Google accounts.
    expect(primary.issues).toContainEqual(
      expect.objectContaining({
        clients: ['gmail.ios', 'gmail.android'],
        message: expect.stringContaining('the underlines of the signature follow the app instead of the design: links are underlined'),
      }),
    );
    // No install destination: the sender's side is every client, as the reader's; nothing is assigned, so nothing is measured as installed.
    expect(report.readers).toHaveLength(13);
    expect(primary.readers).toEqual(primary.issues);
    expect(primary).toMatchObject({ measured_on: 'longest_values', destinations: [] });
    expect(primary.sizes.map((b: { budget: string }) => b.budget)).toEqual(['gmail', 'outlook_addin', 'gmail_clipping']);
    for (const b of primary.sizes) {
      expect(b.fits).toBe(true);
      expect(b.size).toBeGreaterThan(200);
      expect(b.share).toBeCloseTo(b.size / b.limit, 3);
    }
    expect(primary.sizes[2]).toMatchObject({ unit: 'bytes', limit: 104_448, message: expect.stringMatching(/^Gmail clips a message past 102 KB/) });
  });

  describe('reply and internal variants are their own message kinds; the banner shows where the kind shows campaigns', () => {
    let id: string;
    let campaignId: string;
    let byKind: Record<string, { kind: string; banner: unknown; issues: { part: string; message: string }[]; sizes: { size: number }[] }>;
    const bannerIssue = expect.objectContaining({
      part: 'banner',
      clients: ['outlook.windows'],
      message: expect.stringMatching(
        /^In Outlook for Windows, the see-through background rgba\(\d+,\d+,\d+,0\.25\) of the campaign banner shows as the solid #[0-9a-f]{6}\.$/,
      ),
    });

    beforeAll(async () => {
      const s = await api.call('POST', '/v1/signatures', {
        signature: {
          name: 'Kinds',
          draft_content: plain('Primary'),
          variants: [
            { kind: 'reply', draft_content: seeThrough('Reply'), show_marketing_campaigns: true },
            { kind: 'internal', draft_content: plain('Internal'), show_marketing_campaigns: false },
          ],
        },
      });
      expect(s.status).toBe(201);
      id = s.body.data.id;
      // A live campaign naming the signature, with a see-through banner background.
      const c = await api.call('POST', '/v1/marketing_campaigns', {
        marketing_campaign: {
          name: 'Webinar',
          signature_template_ids: [id],
          content: {
            type: 'stack',
            blockStyle: { backgroundColor: 'hsla(210, 70%, 15%, 0.25)', paddingTop: 8 },
            children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Join the webinar' }] }],
          },
        },
      });
      expect(c.status).toBe(201);
      campaignId = c.body.data.id;
      await api.t.ctx.pool.query(
        `update marketing_campaigns set status = 'active', start_time = now() - interval '1 hour', end_time = now() + interval '1 day' where id = $1`,
        [campaignId],
      );
      const r = await api.call('GET', `/v1/signatures/${id}/compatibility?content=draft`);
      byKind = Object.fromEntries(r.body.data.kinds.map((k: { kind: string }) => [k.kind, k]));
    });

    it('lists the three kinds the signature has', () => {
      expect(Object.keys(byKind).sort()).toEqual(['internal', 'primary', 'reply']);
    });

    it('primary (new messages) carries the banner and its issue', () => {
      expect(byKind.primary!.banner).toEqual({ id: campaignId, name: 'Webinar' });
      expect(byKind.primary!.issues).toContainEqual(bannerIssue);
      expect(byKind.primary!.issues.filter((i) => i.part === 'signature' && i.message.includes('see-through'))).toEqual([]);
    });

    it('reply (replies and forwards) shows campaigns: the banner, and its own see-through text', () => {
      expect(byKind.reply!.banner).toEqual({ id: campaignId, name: 'Webinar' });
      expect(byKind.reply!.issues).toContainEqual(bannerIssue);
      expect(byKind.reply!.issues).toContainEqual(
        expect.objectContaining({ part: 'signature', message: expect.stringContaining('rgba(11,37,69,0.5) of the signature') }),
      );
    });

    it('internal (messages to colleagues) does not show campaigns: no banner, smaller', () => {
      expect(byKind.internal!.banner).toBeNull();
      expect(byKind.internal!.issues.filter((i) => i.part === 'banner')).toEqual([]);
      expect(byKind.primary!.sizes[0]!.size).toBeGreaterThan(byKind.internal!.sizes[0]!.size);
    });

    it('nothing is published yet: the published report has no message kind', async () => {
      const pub = await api.call('GET', `/v1/signatures/${id}/compatibility?content=published`);
      expect(pub.body.data.kinds).toEqual([]);
    });
  });

  it("a signature over Gmail's 10,000 characters is a size_limit warning on the write, and still saved", async () => {
    const lines = Array.from({ length: 80 }, (_, i) => ({
      type: 'text',
      tokens: [{ type: 'textToken', value: `Line ${i} of a long disclaimer that nobody reads`, textStyle: { fontSize: 11, color: '#616e7c' } }],
    }));
    const r = await api.call('POST', '/v1/signatures', {
      signature: {
        name: 'Long',
        draft_content: {
          type: 'stack',
          children: [
            { type: 'stack', children: lines.slice(0, 40) },
            { type: 'stack', children: lines.slice(40) },
          ],
        },
      },
    });
    expect(r.status).toBe(201);
    const sizeWarnings = r.body.warnings.filter((w: { code: string }) => w.code === 'size_limit');
    expect(sizeWarnings).toEqual([
      {
        code: 'size_limit',
        kind: 'primary',
        part: null,
        clients: [],
        message: expect.stringMatching(
          /^Gmail takes signatures of up to 10,000 characters of HTML; this one is \d{2},\d{3}, so it cannot be installed in Gmail/,
        ),
      },
    ]);
    const report = await api.call('GET', `/v1/signatures/${r.body.data.id}/compatibility`);
    const gmail = report.body.data.kinds[0].sizes.find((b: { budget: string }) => b.budget === 'gmail');
    expect(gmail.fits).toBe(false);
    expect(gmail.share).toBeGreaterThan(1);
  });

  it("a workspace that installs into Google Workspace: the sender's side is Gmail's clients, the reader's every client, and no Outlook budget", async () => {
    const { workspaceId, key } = await workspaceWithKey(api.t.ctx, 'Google only');
    await seedIntegration(api.t.ctx.pool, workspaceId, { category: 'signatures', kind: 'google_workspace' });
    await seedIntegration(api.t.ctx.pool, workspaceId, { category: 'teammates', kind: 'microsoft_entra', name: 'Entra directory' });
    const s = await api.call('POST', '/v1/signatures', { signature: { name: 'G', draft_content: seeThrough('Ada') } }, key);
    type W = { clients: string[]; side: string; message: string };
    expect(s.body.warnings.some((w: W) => w.side === 'sender' && w.clients.includes('outlook.windows'))).toBe(false);
    // Recipients read in Outlook too: the reader's side names it, and only the clients beyond the sender's.
    expect(s.body.warnings).toContainEqual(expect.objectContaining({ side: 'reader', clients: ['outlook.windows'], message: OUTLOOK_SEE_THROUGH }));
    expect(s.body.warnings.filter((w: W) => w.side === 'reader').every((w: W) => !w.clients.some((c) => c.startsWith('gmail.')))).toBe(true);
    const r = await api.call('GET', `/v1/signatures/${s.body.data.id}/compatibility`, undefined, key);
    expect(r.body.data.clients_from).toBe('installs');
    expect(r.body.data.clients.map((c: { id: string }) => c.id)).toEqual(['gmail.desktop-webmail', 'gmail.ios', 'gmail.android']);
    expect(r.body.data.readers.map((c: { id: string }) => c.id)).toContain('apple-mail.ios');
    expect(r.body.data.kinds[0].readers).toContainEqual(expect.objectContaining({ clients: ['outlook.windows'], message: OUTLOOK_SEE_THROUGH }));
    expect(r.body.data.kinds[0].sizes.map((b: { budget: string }) => b.budget)).toEqual(['gmail', 'gmail_clipping']);
  });

  it('answers 404 for a signature of another workspace or an unknown id, and 422 for an unknown content', async () => {
    const theirs = await api.call('POST', '/v1/signatures', { signature: { name: 'Theirs', draft_content: plain('x') } }, api.otherKey);
    expect((await api.call('GET', `/v1/signatures/${theirs.body.data.id}/compatibility`)).status).toBe(404);
    expect((await api.call('GET', `/v1/signatures/${FOREIGN_UUID}/compatibility`)).status).toBe(404);
    const mine = await api.call('POST', '/v1/signatures', { signature: { name: 'Mine', draft_content: plain('x') } });
    const bad = await api.call('GET', `/v1/signatures/${mine.body.data.id}/compatibility?content=live`);
    expect(bad.status).toBe(422);
    expect(bad.body.details[0].field).toBe('content');
  });
});

describe('at publish: a signature some mailboxes would refuse', () => {
  const api = useApi();

  it('is published where it fits, and the answer names the mailboxes that refuse it with their limit', async () => {
    const pool = api.t.ctx.pool;
    const outlook = await seedIntegration(pool, api.ws, { kind: 'microsoft_entra', category: 'signatures', name: 'Outlook' });
    await pool.query(`update integrations set config = '{"mode": "addin"}' where id = $1`, [outlook]);
    const title = await insertSmartField(pool, api.ws, { slug: 'title' });
    const short = await seedTeammate(pool, api.ws, 'Ann');
    const long = await seedTeammate(pool, api.ws, 'Bob');
    await insertSmartFieldValue(pool, api.ws, { teammateId: short.id, smartFieldId: title, value: 'CEO' });
    await insertSmartFieldValue(pool, api.ws, { teammateId: long.id, smartFieldId: title, value: 'Head of '.repeat(250) });
    // 29,000 characters of text: Bob's 2,000-character title takes his over the add-in's 30,000.
    const pad = Array.from({ length: 15 }, (_, i) => ({ type: 'textToken', value: 'x'.repeat(i < 14 ? 2000 : 1000) }));
    const tree = {
      type: 'stack',
      children: [
        { type: 'text', tokens: pad },
        { type: 'text', tokens: [{ type: 'textToken', smartFieldUuid: title }] },
      ],
    };
    const s = await api.call('POST', '/v1/signatures', { signature: { name: 'Heavy', draft_content: tree } });
    for (const tm of [short, long]) await assignToTeammate(pool, api.ws, s.body.data.id, tm.id);

    const r = await api.call('POST', `/v1/signatures/${s.body.data.id}/publish`);
    expect(r.status).toBe(200);
    expect(r.body.data.last_published_at).not.toBeNull();
    const size = r.body.warnings.filter((w: { code: string }) => w.code === 'size_limit');
    expect(size).toEqual([
      {
        code: 'size_limit',
        kind: 'primary',
        part: null,
        clients: [],
        mailboxes: ['bob@acme.test'],
        limit: 30_000,
        message: expect.stringMatching(
          /^Outlook \(the Outlook add-in\) takes signatures of up to 30,000 characters of HTML: 1 mailbox of 2 would receive more, tracked links included, so they do not get it until it is shorter: bob@acme\.test \(3\d,\d{3}\)\. The others get it\.$/,
        ),
      },
    ]);
    // The install goes where it fits: Ann's add-in waits for the signature, Bob's is refused before anything is served.
    const outcome = async (emailId: string) =>
      installMailbox(api.t.ctx, { workspaceId: api.ws, emailId, kind: 'primary', integrationId: outlook, forced: false });
    expect(await outcome(short.emailIds[0]!)).toMatchObject({ outcome: 'skipped', status: 'pending' });
    expect(await outcome(long.emailIds[0]!)).toMatchObject({
      outcome: 'failed',
      errorCode: 'signature_too_long',
      message: expect.stringMatching(/; the Outlook add-in accepts at most 30000$/),
    });
  });
});

describe('the OpenAPI document describes the extension', () => {
  const api = useApi();

  it('declares the compatibility report and the warnings beside data on the draft writes', async () => {
    const doc = (await api.call('GET', '/v1/openapi.json', undefined, null)).body;
    expect(doc.paths['/v1/signatures/{id}/compatibility'].get.summary).toMatch(/beyond the spec/);
    const json = JSON.stringify(doc);
    expect(json).toContain('CompatibilityReport');
    for (const [path, method, status] of [
      ['/v1/signatures', 'post', '201'],
      ['/v1/signatures/{id}', 'patch', '200'],
      ['/v1/signatures/{id}/publish', 'post', '200'],
    ] as const) {
      const schema = doc.paths[path][method].responses[status].content['application/json'].schema;
      expect(Object.keys(schema.properties ?? {}).sort(), `${method} ${path}`).toEqual(['data', 'warnings']);
      expect(schema.required).toEqual(['data', 'warnings']);
    }
  });
});
