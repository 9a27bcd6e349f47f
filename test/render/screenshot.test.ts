/**
 * The demo signature in a real browser: the sandbox's "Acme standard" tree, rendered for one Acme
 * person with the live campaign banner, opened in headless Chromium (the one npm installs, as `sigsync render
 * --png` uses it) and read back as a PNG.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderSignature } from '../../src/render/render.ts';
import { previewPage } from '../../src/render/preview.ts';
import { screenshot } from '../../src/render/screenshot.ts';
import { acmePeople } from '../../emulators/acme.ts';
import { loadAcme, SANDBOX_SMART_FIELDS, sandboxBannerTree, sandboxSignatureTree } from '../../src/sandbox/seed.ts';
import { HEAVY_TEST_MS } from '../helpers/cli.ts';
import { readPng } from '../helpers/png.ts';

describe('the demo signature as a PNG', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-shot-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(
    'renders in headless Chromium to a card of the expected size that is not blank, in the brand colours',
    async () => {
      const acme = { ...loadAcme(), people: acmePeople() };
      const person = acme.people.find((p) => p.provider === 'google' && p.phone)!;
      const fields = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f, i) => [f.slug, `00000000-0000-4000-8000-00000000000${i}`]));
      const values = { [fields.full_name!]: `${person.given_name} ${person.family_name}`, [fields.job_title!]: person.title, [fields.phone!]: person.phone };
      const kinds = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f) => [fields[f.slug]!, f.kind]));
      const signatureId = '00000000-0000-4000-8000-0000000000aa';
      const campaign = {
        name: acme.campaign.name,
        status: 'active',
        content: sandboxBannerTree(acme.campaign),
        signature_template_ids: [signatureId],
        smart_fields_conditions: [],
      };
      const rendered = renderSignature({
        tree: sandboxSignatureTree(fields) as never,
        values,
        smartFieldKinds: kinds as never,
        signatureId,
        campaign: campaign as never,
      });
      expect(rendered.banner).toBe(true);
      // What a company's signature has: a logo mark, a tel: link, an email and a website line, social icons.
      expect(rendered.html).toContain(`href="tel:${person.phone.replace(/ /g, '')}"`);
      expect(rendered.html).toContain('href="mailto:hello@acme.test"');
      expect(rendered.html).toContain('href="https://acme.test"');
      expect(rendered.html.match(/social-icons\/v1\/\w+\.png/g)).toHaveLength(4);
      expect(rendered.text).toContain(`${person.given_name} ${person.family_name}`);
      const page = path.join(dir, 'demo.html');
      fs.writeFileSync(page, previewPage(rendered, [['teammate', person.email]]));

      const png = path.join(dir, 'demo.png');
      await screenshot(page, png);
      const shot = readPng(png);
      expect(shot.width).toBe(860);
      expect(shot.height).toBeGreaterThan(120);
      expect(shot.height).toBeLessThan(600);
      expect(shot.inked).toBeGreaterThan(0.03);
      expect(shot.colours).toBeGreaterThan(8);
      // The logo mark's and the banner's navy (#0b2545), and the rule's steel blue (#8da9c4), are on the image.
      expect(shot.has([0x8d, 0xa9, 0xc4])).toBe(true);
      expect(shot.has([0x0b, 0x25, 0x45])).toBe(true);
    },
    HEAVY_TEST_MS,
  );
});
