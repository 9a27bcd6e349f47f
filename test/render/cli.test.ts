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
import { campaign, sf, smartFieldKinds, smartFields, teammate, template } from './helpers.ts';

describe('sigsync render', async () => {
  const db = await createDatabase();
  const env = { DATABASE_URL: db.url, ENCRYPTION_KEY: 'a'.repeat(64) };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-render-'));
  let signatureId: string;
  let teammateId: string;
  const values = { ...teammate(), [sf.department!]: 'Sales' };

  beforeAll(async () => {
    const pool = createPool(db.url, 2);
    try {
      const ws = (await pool.query<{ id: string }>("insert into workspaces (name) values ('Acme') returning id")).rows[0]!.id;
      for (const [i, f] of smartFields.entries()) {
        await pool.query('insert into smart_fields (id, workspace_id, label, slug, kind, position) values ($1, $2, $3, $4, $5, $6)', [f.id, ws, f.label, f.slug, f.kind, i]);
      }
      teammateId = (await pool.query<{ id: string }>("insert into teammates (workspace_id, display_name) values ($1, 'Ada Lovelace') returning id", [ws])).rows[0]!.id;
      await pool.query("insert into emails (workspace_id, teammate_id, address, is_primary) values ($1, $2, 'ada@acme.example', true)", [ws, teammateId]);
      for (const [fieldId, value] of Object.entries(values)) {
        await pool.query("insert into smart_field_values (workspace_id, teammate_id, smart_field_id, value, source) values ($1, $2, $3, $4, 'manual')", [ws, teammateId, fieldId, value]);
      }
      const draft = { ...template(), children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Draft only' }] }] };
      signatureId = (
        await pool.query<{ id: string }>("insert into signatures (workspace_id, name, content, draft_content) values ($1, 'Main', $2, $3) returning id", [ws, JSON.stringify(template()), JSON.stringify(draft)])
      ).rows[0]!.id;
      await pool.query("insert into signature_variants (workspace_id, signature_id, kind, content, show_marketing_campaigns) values ($1, $2, 'reply', $3, false)", [ws, signatureId, JSON.stringify(template())]);
      const c = campaign();
      await pool.query(
        "insert into marketing_campaigns (workspace_id, name, status, content, smart_fields_conditions, signature_template_ids, start_time) values ($1, $2, 'active', $3, $4, $5, now())",
        [ws, c.name, JSON.stringify(c.content), JSON.stringify(c.smart_fields_conditions), [signatureId]],
      );
    } finally {
      await pool.end();
    }
  });

  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });

  const expectedHtml = (withBanner: boolean) =>
    renderSignature({ tree: template(), values, smartFieldKinds, signatureId, campaign: withBanner ? { ...campaign(), signature_template_ids: [signatureId] } : null }).html;

  it('writes a standalone preview page with the published signature and the campaign banner', async () => {
    const out = path.join(dir, 'ada.html');
    const r = await runCli(['render', '--signature', signatureId, '--email', 'ADA@acme.example', '--out', out], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`wrote ${out}`);
    expect(r.stdout).toMatch(/banner\s+Signature Summit 2025/);
    expect(r.stdout).toMatch(/size\s+gmail \d+\/10000, outlook \d+\/30000, slack \d+\/39000/);
    const page = fs.readFileSync(out, 'utf8');
    expect(page.startsWith('<!doctype html>')).toBe(true);
    expect(page).toContain(expectedHtml(true));
    expect(page).toContain('published content');
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
    ['an unknown variant', () => ['render', '--signature', signatureId, '--teammate', teammateId, '--variant', 'forward'], /--variant: expected reply or internal/],
    ['a malformed signature id', () => ['render', '--signature', 'nope', '--teammate', teammateId], /--signature: expected an id/],
    ['an unknown signature', () => ['render', '--signature', '00000000-0000-4000-8000-000000000000', '--teammate', teammateId], /--signature: no signature/],
    ['an unknown address', () => ['render', '--signature', signatureId, '--email', 'nobody@acme.example'], /--email: no teammate with the address nobody@acme.example/],
    ['a variant the signature lacks', () => ['render', '--signature', signatureId, '--teammate', teammateId, '--variant', 'internal'], /--variant: signature .* has no internal variant/],
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
    expect(r.stderr).toMatch(/--png: no Chromium at .*no-chromium; leave out --chromium to use the one npm installs \(the preview page .*x\.html was written\)/);
    expect(fs.existsSync(png)).toBe(false);
    expect(fs.readFileSync(path.join(dir, 'x.html'), 'utf8')).toContain(expectedHtml(true));
  });

  it('--png takes a screenshot of the signature in headless Chromium', async () => {
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
  }, HEAVY_TEST_MS);
});
