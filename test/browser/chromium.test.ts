/**
 * The browser that arrives with `npm ci`: unpacked from @sparticuz/chromium on first use (two
 * processes at once each get a whole executable), launched headless through playwright-core, and
 * `CHROMIUM_PATH` for a system browser, which must exist.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ChromiumError, chromiumExecutable, launchChromium } from '../../src/browser/chromium.ts';
import { HEAVY_TEST_MS } from '../helpers/cli.ts';

describe('launchChromium', () => {
  const saved = { CHROMIUM_PATH: process.env.CHROMIUM_PATH, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME };
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-chromium-cache-'));
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

  it(
    'without CHROMIUM_PATH, unpacks the npm-shipped build once (two at once agree) and starts it headless',
    async () => {
      delete process.env.CHROMIUM_PATH;
      process.env.XDG_CACHE_HOME = cache;
      const [a, b] = await Promise.all([chromiumExecutable(), chromiumExecutable()]);
      expect(a).toBe(b);
      expect(a.startsWith(path.join(cache, 'sigsync', 'chromium-'))).toBe(true);
      // Only the finished directory is left: no staging copy behind.
      expect(fs.readdirSync(path.join(cache, 'sigsync'))).toEqual([path.basename(path.dirname(a))]);
      const version = await new Promise<string>((resolve, reject) => {
        const child = spawn(a, ['--version'], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', () => resolve(out));
      });
      expect(version).toMatch(/^Chromium \d+\./);

      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.setContent('<p id="p">hello</p>');
        expect(await page.locator('#p').textContent()).toBe('hello');
        expect(await page.evaluate(() => navigator.userAgent)).toMatch(/Headless/);
      } finally {
        await browser.close();
      }
    },
    HEAVY_TEST_MS,
  );

  it(
    'with CHROMIUM_PATH runs that executable, and refuses one that is not there',
    async () => {
      process.env.XDG_CACHE_HOME = cache;
      delete process.env.CHROMIUM_PATH;
      const shipped = await chromiumExecutable();
      process.env.CHROMIUM_PATH = shipped;
      const browser = await launchChromium();
      await browser.close();

      process.env.CHROMIUM_PATH = path.join(cache, 'no-such-chromium');
      await expect(launchChromium()).rejects.toThrow(ChromiumError);
      await expect(launchChromium()).rejects.toThrow(/CHROMIUM_PATH=.*no-such-chromium: no executable there/);
    },
    HEAVY_TEST_MS,
  );
});
