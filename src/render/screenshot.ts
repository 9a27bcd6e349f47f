/**
 * PNG previews: the preview page opened in the system's headless Chromium (Debian's `chromium`
 * package, `apt-get install -y chromium`), driven by playwright-core. playwright-core never downloads
 * a browser; it runs the executable it is given.
 *
 * Chromium gets a fresh user-data directory per screenshot (removed after) and the flags that keep it
 * from reaching the network on its own (component updates, sync, first-run pages, QUIC), so it does
 * not wait on a closed network. As root it needs `--no-sandbox`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export const DEFAULT_CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_INSTALL = 'apt-get install -y chromium';
const SCREENSHOT_TIMEOUT_MS = 60_000;
/** The element of the preview page that holds the signature (src/render/preview.ts). */
export const SIGNATURE_SELECTOR = '#signature';

export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
];

export class ScreenshotError extends Error {
  override readonly name = 'ScreenshotError';
}

/** Writes a PNG of the signature card of a local preview page. */
export async function screenshot(chromium: string, page: string, png: string): Promise<void> {
  if (!fs.existsSync(chromium)) {
    throw new ScreenshotError(`Chromium is not installed at ${chromium}; install it (${CHROMIUM_INSTALL}) or pass --chromium <path>`);
  }
  const { chromium: launcher } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-chromium-'));
  const asRoot = process.getuid?.() === 0;
  try {
    const context = await launcher.launchPersistentContext(profile, {
      executablePath: chromium,
      headless: true,
      args: [...CHROMIUM_ARGS, ...(asRoot ? ['--no-sandbox'] : [])],
      chromiumSandbox: !asRoot,
      viewport: { width: 900, height: 900 },
      timeout: SCREENSHOT_TIMEOUT_MS,
      offline: true,
    });
    try {
      const tab = context.pages()[0] ?? (await context.newPage());
      await tab.goto(pathToFileURL(page).href, { waitUntil: 'load', timeout: SCREENSHOT_TIMEOUT_MS });
      await tab.locator(SIGNATURE_SELECTOR).screenshot({ path: png, timeout: SCREENSHOT_TIMEOUT_MS });
    } finally {
      await context.close();
    }
  } catch (e) {
    if (e instanceof ScreenshotError) throw e;
    throw new ScreenshotError(`${chromium} could not take the screenshot: ${String((e as Error).message).split('\n')[0]}`, { cause: e });
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}
