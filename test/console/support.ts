/**
 * The console in a real headless Chromium (src/browser/chromium.ts), against the sandbox's story run
 * in-process: "Acme" seeded, synced, assigned, published and installed through the API with the
 * worker running, and the demo's clicks and conversion recorded; a second workspace ("Globex") with
 * one integration that lost access, to show that a session sees its own workspace only.
 * Screenshots go to test-output/console/ (gitignored) for a reviewer.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Runner } from 'graphile-worker';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from '../../src/browser/chromium.ts';
import { createSignInLink } from '../../src/console/sessions.ts';
import { markAccessLost, type IntegrationRow } from '../../src/integrations/integrations.ts';
import { runAnalyticsStory, type AnalyticsDemoResult } from '../../src/sandbox/analyticsDemo.ts';
import { runStory } from '../../src/sandbox/demo.ts';
import { ApiClient } from '../../src/sandbox/flow.ts';
import { seedSandbox, type SeededSandbox } from '../../src/sandbox/seed.ts';
import { startAcmeEmulators, type AcmeEmulators } from '../../emulators/acme.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';
import { startServer } from '../helpers/server.ts';
import { useTestContext, type TestContext } from '../helpers/db.ts';

export const SCREENSHOTS = path.resolve('test-output/console');

export interface ConsoleWorld {
  t: TestContext;
  base: string;
  emu: AcmeEmulators;
  acme: SeededSandbox;
  acmeApi: ApiClient;
  clicked: AnalyticsDemoResult | undefined;
  globex: { workspaceId: string; key: string; integration: IntegrationRow };
  globexApi: ApiClient;
  browser: Browser;
  /** A fresh browser context signed in to the workspace through a sign-in link (`locale`: the browser's, en-US by default). */
  signIn(workspaceId: string, opts?: { locale?: string }): Promise<{ context: BrowserContext; page: Page }>;
  screenshot(page: Page, name: string): Promise<string>;
}

export function useConsoleWorld(): ConsoleWorld {
  const t = useTestContext();
  const w = { t } as ConsoleWorld;
  let server: FastifyInstance;
  let runner: Runner;

  beforeAll(async () => {
    w.emu = await startAcmeEmulators();
    w.acme = await seedSandbox(t.ctx, w.emu);
    ({ server, base: w.base } = await startServer(t.ctx));
    runner = await startWorker(t.ctx, { pollInterval: 50, noCron: true, concurrency: 8 });
    w.acmeApi = new ApiClient(w.base, w.acme.apiKey);
    await runStory(t.ctx, t.ctx.logger, w.acmeApi, w.acme.workspaceId, w.acme.signatureId, false);
    w.clicked = await runAnalyticsStory(t.ctx, t.ctx.logger, w.acmeApi, w.acme.workspaceId, w.emu.google.signatures());

    const { workspaceId, key } = await workspaceWithKey(t.ctx, 'Globex');
    const integration = await connectGoogle(t.ctx, workspaceId, w.emu.google.url, { name: 'Globex directory' });
    await markAccessLost(t.ctx, t.ctx.pool, integration, 'invalid_grant: the service account key was deleted');
    w.globex = { workspaceId, key, integration };
    w.globexApi = new ApiClient(w.base, key);

    w.browser = await launchChromium();
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
  });

  afterAll(async () => {
    await w.browser?.close();
    await runner?.stop();
    await server?.close();
    await w.emu?.close();
  });

  w.signIn = async (workspaceId, opts = {}) => {
    const { token } = await createSignInLink(t.ctx.pool, workspaceId, 'test');
    // A locale as a person's browser has one, unless the test asks for another (a POSIX locale gives Chromium the tag en-US@posix).
    const context = await w.browser.newContext({ viewport: { width: 1280, height: 900 }, locale: opts.locale ?? 'en-US' });
    // Nothing leaves the machine. The service's public base URL (the assets a preview shows, such as
    // the sandbox's logo) is this test's server, so the browser is answered from there; any other
    // host (the social icons') is refused.
    const origin = new URL(w.base).origin;
    const publicOrigin = new URL(t.ctx.config.PUBLIC_BASE_URL).origin;
    await context.route(
      (url) => url.origin !== origin,
      async (route) => {
        const url = new URL(route.request().url());
        if (url.origin !== publicOrigin) return route.abort();
        const res = await fetch(`${w.base}${url.pathname}${url.search}`);
        return route.fulfill({ status: res.status, contentType: res.headers.get('content-type') ?? undefined, body: Buffer.from(await res.arrayBuffer()) });
      },
    );
    const page = await context.newPage();
    // A page's own errors are the test's: printed, so a failing wait says why.
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    page.on('console', (m) => {
      // Images from hosts the CSP does not name, and the social icons' host (refused above), are expected.
      if (m.type() === 'error' && !/^(Failed to load resource: net::ERR_FAILED|Loading the image)/.test(m.text())) console.error(`page console: ${m.text()}`);
    });
    await page.goto(`${w.base}/console/sign-in?token=${token}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.base}/console/integrations`);
    await page.locator('body[data-ready]').waitFor();
    return { context, page };
  };

  w.screenshot = async (page, name) => {
    const file = path.join(SCREENSHOTS, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return file;
  };

  return w;
}
