/**
 * The compatibility report's verdict per mailbox is what the install does: for every golden case,
 * the sandbox's demo and signatures built to sit just under and just over each destination's limit
 * (Gmail 10,000, Outlook on the web 8,000, Slack 10,000, the Outlook add-in 30,000), the mailboxes
 * the report says would refuse the signature are exactly those `install replay --dry-run` fails
 * with signature_too_long, measured on the same HTML (tracked links and the view image included).
 * Real Postgres, the sandbox's emulated tenants, the real SDKs.
 */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { mailboxFits } from '../../src/install/fit.ts';
import { signatureReport, signatureWarnings } from '../../src/install/report.ts';
import { findMailboxes, replayMailbox } from '../../src/install/replay.ts';
import { assignedTeammates } from '../../src/signatures/choices.ts';
import { checkHtml, describeFinding, unexplained } from '../../src/render/compatibility.ts';
import { ApiClient, waitForIdle, waitForRuns } from '../../src/sandbox/flow.ts';
import { everyoneGroups, seedSandbox, type SeededSandbox } from '../../src/sandbox/seed.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { startAcmeEmulators, type AcmeEmulators } from '../../emulators/acme.ts';
import { useTestContext } from '../helpers/db.ts';
import { assignToEveryGroup, insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { clearSmartFieldValues, insertSmartFieldValue } from '../helpers/fixtures/teammates.ts';
import { CASES, readCase, smartFields } from '../render/helpers.ts';

interface Verdict {
  /** "address|integration id" of every mailbox measured. */
  all: string[];
  /** The refused ones, with the size of the HTML they would receive. */
  refused: Record<string, number>;
}

describe("the compatibility report's verdict equals install replay --dry-run for every assigned mailbox", () => {
  const t = useTestContext({ ALLOW_INSECURE_OUTBOUND_URLS: '1' });
  let emu: AcmeEmulators;
  let server: FastifyInstance;
  let runner: Runner;
  let sandbox: SeededSandbox;
  let ws: string;
  let priority = 10;

  beforeAll(async () => {
    emu = await startAcmeEmulators();
    sandbox = await seedSandbox(t.ctx, emu);
    ws = sandbox.workspaceId;
    server = await buildServer(t.ctx);
    const api = new ApiClient(await server.listen({ host: '127.0.0.1', port: 0 }), sandbox.apiKey);
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
    await waitForRuns(t.ctx.pool, await api.sync());
    await api.assignGroups(sandbox.signatureId, await everyoneGroups(t.ctx, ws));
    await api.publish(sandbox.signatureId);
    await waitForIdle(t.ctx.pool);
    // The worker is not needed further: the report and the replay only decide and render.
    await runner.stop();
    for (const f of smartFields) await insertSmartField(t.ctx.pool, ws, { id: f.id, slug: `golden_${f.slug}`, kind: f.kind });
  });
  afterAll(async () => {
    await server?.close();
    await emu?.close();
  });

  /** A published signature that wins every assigned mailbox (a higher priority than any before). */
  async function publishWinner(tree: unknown): Promise<string> {
    const id = await insertSignature(t.ctx.pool, ws, { name: `case ${priority}`, draftContent: tree, published: true });
    await assignToEveryGroup(t.ctx.pool, ws, id, priority++);
    return id;
  }

  async function reportVerdict(signatureId: string): Promise<Verdict> {
    const report = (await signatureReport(t.ctx, ws, signatureId, { content: 'published' }))!;
    const primary = report.kinds.find((k) => k.kind === 'primary')!;
    expect(primary.measured_on).toBe('installed');
    const fits = await mailboxFits(t.ctx, { workspaceId: ws, signatureId, kind: 'primary', content: 'published' });
    const refused: Record<string, number> = {};
    for (const d of primary.destinations) for (const r of d.refused) refused[`${r.email}|${d.integration_id}`] = r.size;
    expect(primary.destinations.reduce((n, d) => n + d.mailboxes, 0)).toBe(fits.length);
    return { all: fits.map((f) => `${f.address}|${f.integration.id}`).sort(), refused };
  }

  async function replayVerdict(signatureId: string): Promise<Verdict> {
    const teammates = await assignedTeammates(t.ctx.pool, ws, signatureId);
    const { rows } = await t.ctx.pool.query<{ address: string }>(
      `select address from emails where workspace_id = $1 and is_primary and teammate_id = any($2::uuid[])`,
      [ws, teammates],
    );
    const all: string[] = [];
    const refused: Record<string, number> = {};
    for (const { address } of rows) {
      const [mailbox] = await findMailboxes(t.ctx.pool, address, ws);
      const replay = await replayMailbox(t.ctx, mailbox!, { kind: 'primary', dryRun: true });
      for (const i of replay.installs) {
        if (i.html === null) continue;
        const key = `${address}|${i.integration_id}`;
        all.push(key);
        if ('errorCode' in i && i.errorCode === 'signature_too_long') refused[key] = i.html.length;
      }
    }
    return { all: all.sort(), refused };
  }

  async function expectSameVerdict(signatureId: string): Promise<Verdict> {
    const report = await reportVerdict(signatureId);
    const replay = await replayVerdict(signatureId);
    expect(report.all.length).toBeGreaterThan(0);
    expect(report.all).toEqual(replay.all);
    expect(report.refused).toEqual(replay.refused);
    return report;
  }

  it("the sandbox's demo: every mailbox takes it, measured as installed, and the installed HTML has nothing unexplained", async () => {
    const v = await expectSameVerdict(sandbox.signatureId);
    expect(v.refused).toEqual({});
    const fits = await mailboxFits(t.ctx, { workspaceId: ws, signatureId: sandbox.signatureId, kind: 'primary', content: 'published' });
    const grace = fits.find((f) => f.address === 'grace.liu@acme.test')!;
    // Tracked links and the view image are in what is measured.
    expect(grace.html).toMatch(/\/c\/[A-Za-z0-9_-]{24}"/);
    expect(grace.html).toMatch(/\/v\/[A-Za-z0-9_-]{24}"/);
    for (const f of fits) expect(unexplained(checkHtml(f.html, { bannerAt: f.bannerAt })).map(describeFinding), f.address).toEqual([]);
  });

  for (const name of fs.readdirSync(CASES).sort()) {
    it(`golden case ${name}`, async () => {
      const input = readCase(name);
      await clearSmartFieldValues(
        t.ctx.pool,
        ws,
        smartFields.map((f) => f.id),
      );
      const { rows } = await t.ctx.pool.query<{ id: string }>(`select id from teammates where workspace_id = $1 and deleted_at is null`, [ws]);
      for (const tm of rows) {
        for (const [field, value] of Object.entries(input.values))
          if (value !== null) await insertSmartFieldValue(t.ctx.pool, ws, { teammateId: tm.id, smartFieldId: field, value });
      }
      await expectSameVerdict(await publishWinner(input.tree));
    });
  }

  /** A signature with the teammate's name, three links and `pad` characters of text (16 tokens, at least one each). */
  const sized = (pad: number) => ({
    type: 'stack',
    id: 'root',
    children: [
      { type: 'text', id: 'name', tokens: [{ type: 'textToken', id: 'n', smartFieldUuid: sandbox.smartFields.full_name }] },
      {
        type: 'text',
        id: 'pad',
        tokens: Array.from({ length: 16 }, (_, i) => ({ type: 'textToken', id: `p${i}`, value: 'x'.repeat(Math.floor(pad / 16) + (i < pad % 16 ? 1 : 0)) })),
      },
      ...[1, 2, 3].map((i) => ({
        type: 'text',
        id: `l${i}`,
        tokens: [{ type: 'textToken', id: `t${i}`, value: `link ${i}`, href: { text: `https://acme.test/page-${i}` } }],
      })),
    ],
  });

  /** The largest HTML a mailbox of the integration named `name` would receive with `pad`. */
  async function largest(pad: number, name: string): Promise<number> {
    const id = await publishWinner(sized(pad));
    const fits = await mailboxFits(t.ctx, { workspaceId: ws, signatureId: id, kind: 'primary', content: 'published' });
    return Math.max(...fits.filter((f) => f.integration.name === name).map((f) => f.size));
  }

  for (const [limit, name, mode] of [
    [10_000, 'Gmail (sandbox)', 'owa'],
    [8_000, 'Outlook (sandbox)', 'owa'],
    [10_000, 'Slack (sandbox)', 'owa'],
    [30_000, 'Outlook (sandbox)', 'addin'],
  ] as const) {
    it(
      `${name}${mode === 'addin' ? ' in add-in mode' : ''}: just under and just over its ${limit.toLocaleString('en-US')} characters`,
      { timeout: 240_000 },
      async () => {
        await t.ctx.pool.query(
          `update integrations set config = jsonb_set(config, '{mode}', to_jsonb($2::text)) where workspace_id = $1 and name = 'Outlook (sandbox)'`,
          [ws, mode],
        );
        // 16 characters of padding give `base`; each further character adds one.
        const base = await largest(16, name);
        const under = await publishWinner(sized(16 + limit - base));
        const v1 = await expectSameVerdict(under);
        expect(Object.keys(v1.refused).filter((k) => k.endsWith(sandbox.integrations[keyOf(name)].id))).toEqual([]);
        const over = await publishWinner(sized(16 + limit - base + 2));
        const v2 = await expectSameVerdict(over);
        const refusedHere = Object.entries(v2.refused).filter(([k]) => k.endsWith(sandbox.integrations[keyOf(name)].id));
        expect(refusedHere.length).toBeGreaterThan(0);
        for (const [, size] of refusedHere) expect(size).toBeGreaterThan(limit);
        // The draft's report (the same tree, judged as if published) refuses the same mailboxes.
        const draft = (await signatureReport(t.ctx, ws, over, { content: 'draft' }))!.kinds.find((k) => k.kind === 'primary')!;
        expect(draft.destinations.flatMap((d) => d.refused.map((r) => `${r.email}|${d.integration_id}`)).sort()).toEqual(Object.keys(v2.refused).sort());
        // At publish: the warning names the refusing mailboxes and their limit.
        const warnings = await signatureWarnings(t.ctx, ws, over, 'published');
        const w = warnings.find((x) => x.code === 'size_limit' && x.limit === limit && x.mailboxes?.includes(refusedHere[0]![0].split('|')[0]!));
        expect(w?.message).toContain(`${limit.toLocaleString('en-US')} characters`);
      },
    );
  }
});

function keyOf(name: string): 'gmail' | 'outlook' | 'slack' {
  return name.startsWith('Gmail') ? 'gmail' : name.startsWith('Outlook') ? 'outlook' : 'slack';
}
