/**
 * Names in any script draw their glyphs in the preview, on a machine with no fonts for them (this
 * one has DejaVu only): each name is rendered into a preview page (src/render/preview.ts), opened in
 * headless Chromium, and checked two ways.
 * - Chromium's own account of the fonts that drew the name (CDP `CSS.getPlatformFontsForNode`):
 *   every glyph outside Latin comes from the shipped font for its script.
 * - The screenshot against the .notdef box: each character of the name, drawn alone, must differ
 *   from a character no font has (U+10FFFD), which draws as the empty box, and from each other
 *   character of the name (missing glyphs all draw as the same box); the emoji are in colour.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../src/browser/chromium.ts';
import { previewPage } from '../../src/render/preview.ts';
import { renderSignature } from '../../src/render/render.ts';
import { SANDBOX_SMART_FIELDS, sandboxSignatureTree } from '../../src/sandbox/seed.ts';
import { HEAVY_TEST_MS, waitFor } from '../helpers/cli.ts';

const NAMES: [script: string, name: string, font: RegExp][] = [
  ['Arabic', 'محمد عبد الله', /^Noto Sans Arabic/],
  ['Hebrew', 'דוד כהן', /^Noto Sans Hebrew/],
  ['Chinese', '王秀英', /^Noto Sans (SC|JP|KR)/],
  ['Japanese', '山田 はなこ', /^Noto Sans (SC|JP|KR)/],
  ['Korean', '김민준', /^Noto Sans (SC|JP|KR)/],
  ['Devanagari', 'प्रिया शर्मा', /^Noto Sans Devanagari/],
  ['emoji', 'Sam 🌈 👩🏽‍💻', /^Twemoji/],
];
const NOTDEF = '\u{10FFFD}';

function pagePath(dir: string, script: string, name: string): string {
  const fields = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f, i) => [f.slug, `00000000-0000-4000-8000-00000000000${i}`]));
  const kinds = Object.fromEntries(SANDBOX_SMART_FIELDS.map((f) => [fields[f.slug]!, f.kind]));
  const values = { [fields.full_name!]: name, [fields.job_title!]: 'Engineer', [fields.phone!]: '+1 555 0100' };
  const rendered = renderSignature({
    tree: sandboxSignatureTree(fields) as never,
    values,
    smartFieldKinds: kinds as never,
    signatureId: '00000000-0000-4000-8000-0000000000aa',
  });
  const file = path.join(dir, `${script}.html`);
  fs.writeFileSync(file, previewPage(rendered, [['teammate', name]]));
  return file;
}

/** Wraps the first occurrence of `text` inside #signature in <span id="probe">, and returns whether it was found. */
async function markName(page: Page, text: string): Promise<boolean> {
  return page.evaluate(`(() => {
    const text = ${JSON.stringify(text)};
    const walker = document.createTreeWalker(document.querySelector('#signature'), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const at = n.data.indexOf(text);
      if (at < 0) continue;
      const rest = n.splitText(at);
      rest.splitText(text.length);
      const span = document.createElement('span');
      span.id = 'probe';
      rest.replaceWith(span);
      span.append(rest);
      return true;
    }
    return false;
  })()`);
}

interface PlatformFont {
  familyName: string;
  isCustomFont: boolean;
  glyphCount: number;
}

async function fontsOfProbe(page: Page): Promise<PlatformFont[]> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('DOM.enable');
  await cdp.send('CSS.enable');
  const { root } = await cdp.send('DOM.getDocument', { depth: -1 });
  const { nodeId } = await cdp.send('DOM.querySelector', { nodeId: root.nodeId, selector: '#probe' });
  const { fonts } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
  await cdp.detach();
  return fonts;
}

/** Replaces the probe's text with one line per grapheme, then the .notdef strings (each at the same x, so that equal glyphs draw equal pixels). */
async function spellOut(page: Page, graphemes: string[], notdefs: string[]): Promise<void> {
  await page.evaluate(`(() => {
    const probe = document.querySelector('#probe');
    probe.textContent = '';
    for (const [i, g] of ${JSON.stringify([...graphemes.map((g, i) => [`g${i}`, g]), ...notdefs.map((g, i) => [`n${i}`, g])])}) {
      const s = document.createElement('span');
      s.id = i;
      s.style.display = 'block';
      s.style.width = 'max-content';
      s.textContent = g;
      probe.append(s);
    }
  })()`);
  await page.evaluate('document.fonts.ready.then(() => true)');
}

const pixels = async (page: Page, id: string) => PNG.sync.read(await page.locator(`#${id}`).screenshot());
const same = (a: PNG, b: PNG) => a.width === b.width && a.height === b.height && a.data.equals(b.data);
const coloured = (p: PNG) => {
  for (let i = 0; i < p.data.length; i += 4) {
    const [r, g, b] = [p.data[i]!, p.data[i + 1]!, p.data[i + 2]!];
    if (Math.max(r, g, b) - Math.min(r, g, b) > 80) return true;
  }
  return false;
};

describe('names in any script in the preview page', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-fonts-'));
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, HEAVY_TEST_MS);
  afterAll(async () => {
    await browser?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  for (const [script, name, font] of NAMES) {
    it(
      `draws a ${script} name (${name}) with its glyphs, not empty boxes`,
      async () => {
        const context = await browser.newContext({ offline: true, viewport: { width: 900, height: 900 } });
        try {
          const page = await context.newPage();
          await page.goto(pathToFileURL(pagePath(dir, script, name)).href, { waitUntil: 'load' });
          await page.evaluate('document.fonts.ready.then(() => true)');
          expect(await markName(page, name)).toBe(true);

          // Chromium's account: the glyphs outside Latin are all drawn by the shipped font for the script.
          // The probe is new: Chromium reports its fonts once it has been laid out and painted.
          const fonts = await waitFor(async () => {
            const f = await fontsOfProbe(page);
            return f.length > 0 && f;
          });
          const latin = [...name].filter((c) => c.codePointAt(0)! <= 0x24f).length;
          const shipped = fonts.filter((f) => f.isCustomFont && font.test(f.familyName));
          const others = fonts.filter((f) => !shipped.includes(f));
          expect(shipped.length, JSON.stringify(fonts)).toBeGreaterThan(0);
          expect(
            others.reduce((n, f) => n + f.glyphCount, 0),
            JSON.stringify(fonts),
          ).toBeLessThanOrEqual(latin);

          // The screenshot: no character of the name draws as the .notdef box.
          const graphemes = [...new Set([...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(name)].map((s) => s.segment))].filter(
            (g) => g.trim() !== '' && g.codePointAt(0)! > 0x24f,
          );
          expect(graphemes.length).toBeGreaterThan(1);
          const longest = Math.max(...graphemes.map((g) => [...g].length));
          const notdefs = Array.from({ length: longest }, (_, i) => NOTDEF.repeat(i + 1));
          await spellOut(page, graphemes, notdefs);
          const boxes = await Promise.all(notdefs.map((_, i) => pixels(page, `n${i}`)));
          const shots: PNG[] = [];
          for (const [i, g] of graphemes.entries()) {
            const shot = await pixels(page, `g${i}`);
            expect(
              boxes.some((box) => same(shot, box)),
              `${g} draws as the .notdef box`,
            ).toBe(false);
            const twin = shots.findIndex((other) => same(shot, other));
            expect(twin, `${g} draws exactly as ${graphemes[twin]}`).toBe(-1);
            if (script === 'emoji') expect(coloured(shot), `${g} is not in colour`).toBe(true);
            shots.push(shot);
          }
        } finally {
          await context.close();
        }
      },
      HEAVY_TEST_MS,
    );
  }
});
