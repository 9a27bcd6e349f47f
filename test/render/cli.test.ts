/** `sigsync render` against a real database: preview pages, variants, banners, usage errors and --png. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.ts';
import { renderSignature } from '../../src/render/render.ts';
import { createDatabase } from '../helpers/db.ts';
import { DEADLINE_MS, HEAVY_TEST_MS, runCli } from '../helpers/cli.ts';
import { readPng } from '../helpers/png.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { insertCampaign } from '../helpers/fixtures/campaigns.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertSignature, upsertVariant } from '../helpers/fixtures/signatures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';
import { campaign, sf, smartFieldKinds, smartFields, teammate, template } from './helpers.ts';

describe('sigsync render', async () => {
  const db = await createDatabase();
  const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: 'a'.repeat(64) };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-render-'));
  let signatureId: string;
  let teammateId: string;
  let ws: string;
  const values = { ...teammate(), [sf.department!]: 'Sales' };

  beforeAll(async () => {
    const pool = createPool(db.url, 2);
    try {
      ws = (await createWorkspace(pool, 'Acme')).id;
      for (const [i, f] of smartFields.entries()) await insertSmartField(pool, ws, { id: f.id, label: f.label, slug: f.slug, kind: f.kind, position: i });
      teammateId = (await insertTeammate(pool, ws, { displayName: 'Ada Lovelace', emails: [{ address: 'ada@acme.example', primary: true }], values })).id;
      const draft = { ...template(), children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Draft only' }] }] };
      signatureId = await insertSignature(pool, ws, { name: 'Main', content: template(), draftContent: draft });
      await upsertVariant(pool, ws, { signatureId, kind: 'reply', content: template(), draftContent: null, published: false });
      const c = campaign();
      await insertCampaign(pool, ws, {
        name: c.name!,
        content: c.content,
        smartFieldsConditions: c.smart_fields_conditions,
        signatureTemplateIds: [signatureId],
      });
    } finally {
      await pool.end();
    }
  });

  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });

  const expectedHtml = (withBanner: boolean) =>
    renderSignature({
      tree: template(),
      values,
      smartFieldKinds,
      signatureId,
      campaign: withBanner ? { ...campaign(), signature_template_ids: [signatureId] } : null,
    }).html;

  it('writes a standalone preview page with the published signature and the campaign banner', async () => {
    const out = path.join(dir, 'ada.html');
    const r = await runCli(['render', '--signature', signatureId, '--email', 'ADA@acme.example', '--out', out], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${out}`);
    expect(r.stdout).toMatch(/banner\s+Signature Summit 2025/);
    expect(r.stdout).toMatch(/size\s+gmail \d+\/10000, outlook \d+\/30000, outlook_owa \d+\/8000, slack \d+\/10000/);
    const page = fs.readFileSync(out, 'utf8');
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain(expectedHtml(true));
    expect(page).toContain('published content');
  });

  it('--check prints the compatibility report for every client (no install destination known), with the banner and the size budgets', async () => {
    const r = await runCli(['render', '--signature', signatureId, '--email', 'ada@acme.example', '--check'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('<table');
    const lines = r.stdout.split('\n');
    expect(lines).toContain(
      'clients   Gmail on the web, Gmail for iPhone and iPad, Gmail for Android, Outlook for Windows, Outlook for Mac, Outlook on the web, Outlook for iPhone and iPad, Outlook for Android, Apple Mail on the Mac, Apple Mail on iPhone and iPad, Yahoo Mail on the web, Yahoo Mail for iPhone and iPad, Yahoo Mail for Android (all; no install destination is known)',
    );
    expect(lines).toContain('primary (new messages), with the banner of Signature Summit 2025, as rendered, untracked (no assigned mailbox receives it)');
    expect(lines).toContain(
      "  - In Gmail for iPhone and iPad and Gmail for Android, when the reader's mailbox is not a Google account, the underlines of the signature follow the app instead of the design: links are underlined, other text is not.",
    );
    expect(lines).toContain(
      '  - In Outlook for Windows, on screens scaled above 100%, the images of the signature are not enlarged with the text, so they look smaller.',
    );
    expect(r.stdout).toMatch(/\n {2}size: Gmail takes signatures of up to 10,000 characters of HTML; this one is \d,\d{3} \(\d+(\.\d)?%\)\.\n/);
    expect(r.stdout).toMatch(/\n {2}size: The Outlook add-in sets signatures of up to 30,000 characters of HTML/);
    expect(r.stdout).toMatch(
      /\n {2}size: Gmail clips a message past 102 KB .* the signature takes \d,\d{3} bytes of it \(\d+(\.\d)?%\), so a reply thread that quotes it \d+ times is clipped/,
    );
  });

  it("--check limits the clients to the workspace's installs, and reports the reply variant as its own kind", async () => {
    const pool = createPool(db.url, 1);
    try {
      await insertIntegrationRow(pool, ws, { kind: 'microsoft_entra', category: 'signatures', name: 'Outlook' });
      const r = await runCli(['render', '--signature', signatureId, '--teammate', teammateId, '--variant', 'reply', '--check'], env);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(
        "clients   Outlook for Windows, Outlook for Mac, Outlook on the web, Outlook for iPhone and iPad, Outlook for Android (the workspace's mailboxes: the sender's side)",
      );
      expect(r.stdout).toContain('readers   every client recipients read in: 13 clients');
      expect(r.stdout).toContain('reply (replies and forwards), as rendered, untracked (no assigned mailbox receives it)\n');
      expect(r.stdout).not.toContain('Gmail takes signatures');
      expect(r.stdout).toContain('size: The Outlook add-in sets signatures');
    } finally {
      await pool.query("delete from integrations where name = 'Outlook'");
      await pool.end();
    }
  });

  it('renders the reply variant by teammate id, without the banner it does not show', async () => {
    const out = path.join(dir, 'reply.html');
    const r = await runCli(['render', '--signature', signatureId, '--teammate', teammateId, '--variant', 'reply', '--out', out], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/banner\s+none/);
    const page = fs.readFileSync(out, 'utf8');
    expect(page).toContain(expectedHtml(false));
    expect(page).not.toContain('Signature Summit');
  });

  it('prints the page on stdout without --out, and renders the draft with --draft', async () => {
    const r = await runCli(['render', '--signature', signatureId, '--teammate', teammateId, '--draft'], env);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('<!doctype html>')).toBe(true);
    expect(r.stdout).toContain('Draft only');
    expect(r.stdout).toContain('draft content');
  });

  const usageErrors: [string, () => string[], RegExp][] = [
    ['neither --teammate nor --email', () => ['render', '--signature', signatureId], /exactly one of --teammate <id> and --email <address>/],
    ['both --teammate and --email', () => ['render', '--signature', signatureId, '--teammate', teammateId, '--email', 'ada@acme.example'], /exactly one of/],
    [
      'an unknown variant',
      () => ['render', '--signature', signatureId, '--teammate', teammateId, '--variant', 'forward'],
      /--variant: expected reply or internal/,
    ],
    ['a malformed signature id', () => ['render', '--signature', 'nope', '--teammate', teammateId], /--signature: expected an id/],
    ['an unknown signature', () => ['render', '--signature', '00000000-0000-4000-8000-000000000000', '--teammate', teammateId], /--signature: no signature/],
    [
      'an unknown address',
      () => ['render', '--signature', signatureId, '--email', 'nobody@acme.example'],
      /--email: no teammate with the address nobody@acme.example/,
    ],
    [
      'a variant the signature lacks',
      () => ['render', '--signature', signatureId, '--teammate', teammateId, '--variant', 'internal'],
      /--variant: signature .* has no internal variant/,
    ],
    ['no --signature', () => ['render', '--teammate', teammateId], /required option '--signature <id>'/],
  ];
  for (const [what, args, message] of usageErrors) {
    it(`exits 2 naming the flag on ${what}`, async () => {
      const r = await runCli(args(), env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    });
  }

  it('--png with a --chromium that is not there still writes the preview page, and exits 1 with one line saying what to do', async () => {
    const png = path.join(dir, 'x.png');
    const r = await runCli(['render', '--signature', signatureId, '--teammate', teammateId, '--png', png, '--chromium', path.join(dir, 'no-chromium')], env);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /--png: no Chromium at .*no-chromium; leave out --chromium to use the one npm installs \(the preview page .*x\.html was written\)/,
    );
    expect(fs.existsSync(png)).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'x.html'), 'utf8')).toContain(expectedHtml(true));
  });

  it(
    '--png takes a screenshot of the signature in headless Chromium',
    async () => {
      const png = path.join(dir, 'shot.png');
      const r = await runCli(['render', '--signature', signatureId, '--teammate', teammateId, '--png', png], env, DEADLINE_MS);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`wrote ${png}`);
      expect(fs.readFileSync(path.join(dir, 'shot.html'), 'utf8')).toContain(expectedHtml(true));
      const shot = readPng(png);
      // The signature card of the preview page: its column is 860 px wide (max-width) in a 900 px viewport.
      expect(shot.width).toBe(860);
      expect(shot.height).toBeGreaterThan(80);
      expect(shot.inked).toBeGreaterThan(0.01);
      expect(shot.colours).toBeGreaterThan(4);
    },
    HEAVY_TEST_MS,
  );
});
