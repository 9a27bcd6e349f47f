/**
 * The rendered signature laid out by headless Chromium (the one `npm ci` installs, as `sigsync render
 * --png` uses it), measured in the page rather than compared with stored pixels: text direction from
 * the positions of characters, widths from boxes, underlines and contrast from computed styles. The
 * demo signature of the sandbox is the base; each case changes what a directory could send.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../src/browser/chromium.ts';
import { previewPage } from '../../src/render/preview.ts';
import { renderSignature, type RenderOutput } from '../../src/render/render.ts';
import type { ContentTree } from '../../src/render/schema.ts';
import { SOCIAL_NETWORKS } from '../../src/render/social.ts';
import { loadAcme, SANDBOX_SMART_FIELDS, sandboxBannerTree, sandboxSignatureTree } from '../../src/sandbox/seed.ts';
import { HEAVY_TEST_MS } from '../helpers/cli.ts';
import { PROBES } from './pageProbes.ts';

const fields = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f, i) => [f.slug, `00000000-0000-4000-8000-00000000000${i}`]));
const kinds = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f) => [fields[f.slug]!, f.kind]));
const SIGNATURE_ID = '00000000-0000-4000-8000-0000000000aa';
const PHONE = '+1 415 555 0109';
/** The widest a signature is laid out (docs/rendering.md, Width). */
const DESIGNED_MAX = 600;

type Tree = ReturnType<typeof sandboxSignatureTree>;

function render(tree: Tree | ContentTree, values: Record<string, string>, banner = true): RenderOutput {
  const acme = loadAcme();
  const campaign = banner
    ? {
        name: acme.campaign.name,
        status: 'active',
        content: sandboxBannerTree(acme.campaign),
        signature_template_ids: [SIGNATURE_ID],
        smart_fields_conditions: [],
      }
    : null;
  return renderSignature({ tree: tree as ContentTree, values, smartFieldKinds: kinds as never, signatureId: SIGNATURE_ID, campaign: campaign as never });
}

const person = (name: string, title: string) => ({ [fields.full_name!]: name, [fields.job_title!]: title, [fields.phone!]: PHONE });

/** The demo with the job title and the phone on one line, as many signatures set them. */
function titleAndPhoneTree(): Tree {
  const tree = sandboxSignatureTree(fields);
  const who = (tree.children[0] as { children: { id: string; children?: unknown[] }[] }).children.find((c) => c.id === 'who')!;
  const small = { fontSize: 13, color: '#5c677d' };
  who.children!.push({
    type: 'text',
    id: 'title-phone',
    tokens: [
      { type: 'textToken', id: 'tp-title', smartFieldUuid: fields.job_title, textStyle: small },
      { type: 'textToken', id: 'tp-sep', value: ' | ', textStyle: small },
      { type: 'textToken', id: 'tp-phone', smartFieldUuid: fields.phone, textStyle: small, href: { smartFieldUuid: fields.phone } },
    ],
  });
  return tree;
}

describe('the signature laid out in Chromium', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-layout-'));
  let browser: Browser;
  let n = 0;
  beforeAll(async () => {
    browser = await launchChromium();
  }, HEAVY_TEST_MS);
  afterAll(async () => {
    await browser?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function open(rendered: RenderOutput, opts: { dark?: boolean } = {}): Promise<Page> {
    const file = path.join(dir, `page-${++n}.html`);
    fs.writeFileSync(file, previewPage(rendered, [['case', String(n)]]));
    const context = await browser.newContext({ viewport: { width: 900, height: 900 }, offline: true, colorScheme: opts.dark ? 'dark' : 'light' });
    const page = await context.newPage();
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    await page.evaluate('document.fonts.ready.then(() => true)');
    await page.addScriptTag({ content: PROBES });
    if (process.env.LAYOUT_PNG) await page.locator('#signature').screenshot({ path: path.join(process.env.LAYOUT_PNG, `layout-${n}.png`) });
    return page;
  }

  const probe = <T>(page: Page, js: string) => page.evaluate(js) as Promise<T>;
  type Lefts = { text: string; direction: string; lefts: { ch: string; left: number }[] } | null;
  const increasing = (l: Lefts) => l!.lefts.every((c, i) => i === 0 || c.left > l!.lefts[i - 1]!.left);
  const decreasing = (l: Lefts) => l!.lefts.every((c, i) => i === 0 || c.left < l!.lefts[i - 1]!.left);

  for (const [script, title, font] of [
    ['Arabic', 'مديرة المبيعات', 'Noto Sans Arabic Variable'],
    ['Hebrew', 'מנהלת מכירות', 'Noto Sans Hebrew Variable'],
  ] as const) {
    it(
      `an ${script} job title beside the phone: the phone reads left to right, the title right to left, with its glyphs`,
      async () => {
        const page = await open(render(titleAndPhoneTree(), person('Grace Liu', title)));
        try {
          const phone = await probe<Lefts>(page, `probes.charLefts('415 555')`);
          expect(phone!.text).toBe(PHONE);
          expect(phone!.lefts.map((c) => c.ch).join('')).toBe('+14155550109');
          // "+1 415 555 0109" laid out as "0109 555 415 1+" has its characters' left edges out of order.
          expect(increasing(phone), JSON.stringify(phone)).toBe(true);
          const t = await probe<Lefts>(page, `probes.charLefts(${JSON.stringify(title)})`);
          expect(t!.direction).toBe('rtl');
          expect(decreasing(t), JSON.stringify(t)).toBe(true);
          // The value is its own run: the separator stays between the title and the phone.
          const sep = await probe<Lefts>(page, `probes.charLefts('|')`);
          expect(sep!.lefts[0]!.left).toBeGreaterThan(Math.max(...t!.lefts.map((c) => c.left)));
          expect(sep!.lefts[0]!.left).toBeLessThan(phone!.lefts[0]!.left);
          const loaded = await probe<string[]>(page, `[...document.fonts].filter((f) => f.status === 'loaded').map((f) => f.family)`);
          expect(loaded.map((f) => f.replace(/"/g, ''))).toContain(font);
        } finally {
          await page.context().close();
        }
      },
      HEAVY_TEST_MS,
    );
  }

  it(
    'a 313-character name wraps: the signature keeps its designed width and its gaps',
    async () => {
      const name = `${'Maximiliana Alexandra '.repeat(6)}${'X'.repeat(181)}`;
      expect(name).toHaveLength(313);
      const page = await open(render(sandboxSignatureTree(fields), person(name, 'Head of Partnerships')));
      try {
        const sig = await probe<{ width: number }>(page, 'probes.sig()');
        expect(sig.width).toBeLessThanOrEqual(DESIGNED_MAX);
        const gap = await probe<{ width: number }>(page, `probes.box(document.querySelector('#signature td[width="14"]'))`);
        expect(gap.width).toBe(14);
        // The name is on several lines, inside the signature.
        const nameBox = await probe<{ left: number; width: number; height: number }>(
          page,
          `probes.box([...document.querySelectorAll('#signature td')].find((td) => td.textContent.startsWith('Maximiliana') && !td.querySelector('td')))`,
        );
        expect(nameBox.height).toBeGreaterThan(60);
        expect(nameBox.left + nameBox.width).toBeLessThanOrEqual(await probe<number>(page, `probes.sig().left + probes.sig().width`));
      } finally {
        await page.context().close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    '50 social links wrap onto several rows within the designed width',
    async () => {
      const tree = sandboxSignatureTree(fields);
      const social = tree.children.find((c) => c.id === 'social') as { children: unknown[] };
      social.children = Array.from({ length: 50 }, (_, i) => ({
        type: 'socialListItem',
        id: `s-${i}`,
        network: SOCIAL_NETWORKS[i % SOCIAL_NETWORKS.length],
        href: { text: `https://acme.test/social/${i}` },
      }));
      const page = await open(render(tree, person('Grace Liu', 'Head of Partnerships')));
      try {
        const icons = await probe<{ left: number; top: number; width: number }[]>(
          page,
          `[...document.querySelectorAll('#signature img[src*="social-icons"]')].map(probes.box)`,
        );
        expect(icons).toHaveLength(50);
        const sig = await probe<{ left: number; width: number }>(page, 'probes.sig()');
        expect(sig.width).toBeLessThanOrEqual(DESIGNED_MAX);
        expect(Math.max(...icons.map((i) => i.left + i.width)) - sig.left).toBeLessThanOrEqual(DESIGNED_MAX);
        expect(new Set(icons.map((i) => Math.round(i.top))).size).toBeGreaterThanOrEqual(3);
        // Each row keeps the icons' size and gap.
        expect(icons.every((i) => i.width === 20)).toBe(true);
        expect(icons[1]!.left - icons[0]!.left).toBe(26);
      } finally {
        await page.context().close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    'in dark mode, with the page behind the message darkened and inline colours kept, every text keeps a contrast of 4.5:1',
    async () => {
      const rendered = render(sandboxSignatureTree(fields), person('Grace Liu', 'Head of Partnerships'));
      const page = await open(rendered, { dark: true });
      try {
        // What a reader's client in dark mode does to a message it does not rewrite: a dark page, the message's own colours.
        await page.addStyleTag({ content: ':root{color-scheme:dark} body,#signature{background:#1f1f1f !important;color:#e8e8e8 !important}' });
        expect(await probe<boolean>(page, `matchMedia('(prefers-color-scheme: dark)').matches`)).toBe(true);
        const runs = await probe<{ text: string; color: string; contrast: number }[]>(page, 'probes.contrasts()');
        expect(runs.map((r) => r.text)).toEqual(expect.arrayContaining(['Grace Liu', 'Head of Partnerships', PHONE]));
        expect(runs.filter((r) => r.contrast < 4.5)).toEqual([]);
      } finally {
        await page.context().close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    'in dark mode with colours rewritten the way Outlook on the web does (light backgrounds darkened, dark text lightened), every text keeps 4.5:1',
    async () => {
      const page = await open(render(sandboxSignatureTree(fields), person('Grace Liu', 'Head of Partnerships')), { dark: true });
      try {
        await page.addStyleTag({ content: ':root{color-scheme:dark} body,#signature{background:#1f1f1f !important;color:#e8e8e8 !important}' });
        expect(await probe<number>(page, 'probes.rewriteDark()')).toBeGreaterThan(0);
        const runs = await probe<{ text: string; color: string; contrast: number }[]>(page, 'probes.contrasts()');
        expect(runs.map((r) => r.text)).toEqual(expect.arrayContaining(['Grace Liu', PHONE]));
        expect(runs.filter((r) => r.contrast < 4.5)).toEqual([]);
      } finally {
        await page.context().close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    'an underlined first text does not underline the text and links after it',
    async () => {
      const tree = sandboxSignatureTree(fields);
      const company = (tree.children[0] as { children: { id: string; children?: { id: string; tokens?: unknown[] }[] }[] }).children
        .find((c) => c.id === 'who')!
        .children!.find((c) => c.id === 'company')!;
      company.tokens = [
        { type: 'textToken', id: 'u1', value: 'Acme Inc.', textStyle: { textDecoration: 'underline' } },
        { type: 'textToken', id: 'u2', value: ' since 1999, ' },
        { type: 'textToken', id: 'u3', value: 'careers', textStyle: { textDecoration: 'none' }, href: { text: 'https://acme.test/careers' } },
      ];
      const page = await open(render(tree, person('Grace Liu', 'Head of Partnerships')));
      try {
        expect(await probe<boolean>(page, `probes.underlined('Acme Inc.')`)).toBe(true);
        expect(await probe<boolean>(page, `probes.underlined('since 1999')`)).toBe(false);
        expect(await probe<boolean>(page, `probes.underlined('careers')`)).toBe(false);
      } finally {
        await page.context().close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    'the 420 px banner is as wide as the 420 px rule above it',
    async () => {
      const page = await open(render(sandboxSignatureTree(fields), person('Grace Liu', 'Head of Partnerships')));
      try {
        const rule = await probe<{ width: number }>(page, `probes.box(document.querySelector('#signature td[bgcolor="#8da9c4"][width="420"]'))`);
        const bannerBoxes = await probe<{ width: number }[]>(page, `[...document.querySelectorAll('#signature [bgcolor="#0b2545"]')].map(probes.box)`);
        expect(rule.width).toBe(420);
        expect(bannerBoxes.at(-1)!.width).toBe(420);
      } finally {
        await page.context().close();
      }
    },
    HEAVY_TEST_MS,
  );
});
