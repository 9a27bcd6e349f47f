/**
 * PNG previews: the preview page opened in headless Chromium (src/browser/chromium.ts: the build
 * that `npm ci` installs, or the system's through `CHROMIUM_PATH`), driven by playwright-core.
 * Nothing reaches the network: the page is a local file, and every http(s) request it makes is
 * answered from `resources` (the workspace's stored assets the signature shows, by their public URL:
 * the logo, photos) or refused, so images the service hosts show and no other request leaves.
 */
import { pathToFileURL } from 'node:url';
import { ChromiumError, launchChromium } from '../browser/chromium.ts';

const SCREENSHOT_TIMEOUT_MS = 60_000;
/** The element of the preview page that holds the signature (src/render/preview.ts). */
export const SIGNATURE_SELECTOR = '#signature';

export class ScreenshotError extends Error {
  override readonly name = 'ScreenshotError';
}

/** A stored file the page may load, by its URL. */
export type PageResources = ReadonlyMap<string, { contentType: string; data: Buffer }>;

/** Writes a PNG of the signature card of a local preview page. */
export async function screenshot(page: string, png: string, resources: PageResources = new Map()): Promise<void> {
  let browser;
  try {
    browser = await launchChromium();
  } catch (e) {
    if (e instanceof ChromiumError) throw new ScreenshotError(e.message, { cause: e });
    throw e;
  }
  try {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    await context.route(/^https?:/, (route) => {
      const found = resources.get(route.request().url());
      return found ? route.fulfill({ status: 200, contentType: found.contentType, body: found.data }) : route.abort('internetdisconnected');
    });
    const tab = await context.newPage();
    await tab.goto(pathToFileURL(page).href, { waitUntil: 'load', timeout: SCREENSHOT_TIMEOUT_MS });
    // The page's fonts (src/render/fonts.ts) load as text needs them; draw once they have.
    await tab.evaluate('document.fonts.ready.then(() => true)');
    await tab.locator(SIGNATURE_SELECTOR).screenshot({ path: png, timeout: SCREENSHOT_TIMEOUT_MS });
  } catch (e) {
    throw new ScreenshotError(`Chromium could not take the screenshot: ${String((e as Error).message).split('\n')[0]}`, { cause: e });
  } finally {
    await browser.close();
  }
}
