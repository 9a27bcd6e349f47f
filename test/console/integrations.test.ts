/**
 * The console's sign-in and its integrations page, in headless Chromium (test/console/support.ts).
 */
import { describe, expect, it } from 'vitest';
import { createSignInLink } from '../../src/console/sessions.ts';
import { acmePeople } from '../../emulators/acme.ts';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

const NO_GMAIL = acmePeople().find((p) => p.provider === 'google' && p.no_mailbox)!;

interface ApiFailure {
  id: string;
  email: { address: string };
  integration: { id: string; name: string };
  error_code: string;
  error_message: string;
  fix: string;
}

interface ApiIntegration {
  id: string;
  name: string;
  status: string;
  dashboard_url: string;
}

describe('console: sign-in and integrations', () => {
  const w = useConsoleWorld();

  it('a sign-in link opens one session (HttpOnly, SameSite=Strict cookie, stored hashed) and works once', async () => {
    const { token } = await createSignInLink(w.t.ctx.pool, w.acme.workspaceId, 'test');
    const context = await w.browser.newContext();
    const page = await context.newPage();
    // Without a session the pages say how to sign in.
    const before = await page.goto(`${w.base}/console/integrations`);
    expect(before!.status()).toBe(401);
    await expect(page.locator('main').textContent()).resolves.toContain('sigsync console link --workspace');
    // Opening the link (a GET, as a link preview would) does not spend it.
    await page.goto(`${w.base}/console/sign-in?token=${token}`);
    await page.goto(`${w.base}/console/sign-in?token=${token}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${w.base}/console/integrations`);
    await page.locator('body[data-ready="integrations"]').waitFor();
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'sigsync_console', httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
    const stored = await w.t.ctx.pool.query<{ token_hash: Buffer; workspace_id: string }>('select token_hash, workspace_id from console_sessions');
    expect(stored.rows.map((r) => r.workspace_id)).toContain(w.acme.workspaceId);
    expect(stored.rows.some((r) => r.token_hash.toString('latin1').includes(cookie!.value))).toBe(false);

    // The same link a second time: refused.
    const again = await w.browser.newContext();
    const second = await again.newPage();
    await second.goto(`${w.base}/console/sign-in?token=${token}`);
    const refused = second.waitForResponse((r) => r.url().endsWith('/console/sign-in') && r.request().method() === 'POST');
    await second.getByRole('button', { name: 'Sign in' }).click();
    expect((await refused).status()).toBe(401);
    expect(await again.cookies()).toEqual([]);

    // Signing out ends the session on the server.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForLoadState('load');
    await expect.poll(async () => (await context.request.get(`${w.base}/console/api/session`)).status()).toBe(401);
    await Promise.all([context.close(), again.close()]);
  });

  it('an expired link is refused', async () => {
    const { token } = await createSignInLink(w.t.ctx.pool, w.acme.workspaceId, 'test', -1000);
    // Posted as the console's own sign-in page posts it (test/console/security.test.ts: from anywhere else, 403).
    const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(w.base).origin, 'sec-fetch-site': 'same-origin' };
    const res = await fetch(`${w.base}/console/sign-in`, { method: 'POST', headers, body: `token=${token}`, redirect: 'manual' });
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it("lists the workspace's integrations as the API does, and only them", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const api = (await w.acmeApi.request<{ data: ApiIntegration[] }>('GET', '/v1/integrations?per_page=100')).body.data;
    const rows = page.locator('#integrations tbody tr');
    await expect.poll(() => rows.count()).toBe(api.length);
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({ id: tr.getAttribute('data-integration-id'), name: tr.cells[0]!.textContent, status: tr.cells[3]!.textContent })),
    );
    expect(shown).toEqual(api.map((i) => ({ id: i.id, name: i.name, status: i.status.replace(/_/g, ' ') })));
    expect(await page.locator('main').textContent()).not.toContain('Globex');
    expect(await page.locator('#workspace').textContent()).toBe('Acme');
    await w.screenshot(page, 'integrations');
    await context.close();
  });

  it("an integration's dashboard_url opens its page: runs with the API's counters, and sync now runs live", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const api = (await w.acmeApi.request<{ data: (ApiIntegration & { category: string })[] }>('GET', '/v1/integrations?per_page=100')).body.data;
    const directory = api.find((i) => i.category === 'teammates' && i.name.includes('Google'))!;
    const url = new URL(directory.dashboard_url);
    expect(url.pathname).toBe(`/console/integrations/${directory.id}`);
    await page.goto(`${w.base}${url.pathname}`);
    await expect.poll(() => page.locator('#title').textContent()).toBe(directory.name);
    const firstRun = page.locator('#runs tbody tr').first();
    const runId = (await firstRun.getAttribute('data-run-id'))!;
    const run = (await w.acmeApi.request<{ data: { counters: Record<string, number> } }>('GET', `/v1/integrations/sync/${runId}`)).body.data;
    for (const c of ['pages', 'seen', 'created', 'updated', 'unchanged', 'deleted', 'skipped', 'errors', 'rate_limit_waits']) {
      expect(await firstRun.locator(`[data-counter="${c}"]`).textContent(), c).toBe(String(run.counters[c]));
    }
    // Sync now from the keyboard: the new run shows up and is followed until it ends, without a reload.
    await page.locator('#sync-now').focus();
    await page.keyboard.press('Enter');
    const newRun = page.locator('#runs tbody tr').first();
    await expect.poll(() => newRun.getAttribute('data-run-id')).not.toBe(runId);
    const started = await w.t.ctx.pool.query<{ id: string; trigger: string }>(
      'select id, trigger from sync_runs where integration_id = $1 order by started_at desc limit 1',
      [directory.id],
    );
    expect(started.rows[0]).toEqual({ id: await newRun.getAttribute('data-run-id'), trigger: 'api' });
    await expect.poll(() => newRun.getAttribute('data-status'), { timeout: 60_000 }).toBe('succeeded');
    const finished = (
      await w.acmeApi.request<{ data: { id: string; counters: Record<string, number> } }>(
        'GET',
        `/v1/integrations/sync/${(await newRun.getAttribute('data-run-id'))!}`,
      )
    ).body.data;
    expect(await newRun.locator('[data-counter="seen"]').textContent()).toBe(String(finished.counters.seen));
    expect(finished.counters.seen).toBeGreaterThan(0);
    await w.screenshot(page, 'integration');
    await context.close();
  });

  it('a workspace that lost access sees what to do, and nothing of another workspace', async () => {
    const { context, page } = await w.signIn(w.globex.workspaceId);
    const api = (await w.globexApi.request<{ data: ApiIntegration[] }>('GET', '/v1/integrations')).body.data;
    expect(api.map((i) => i.name)).toEqual(['Globex directory']);
    expect(await page.locator('#integrations tbody tr').count()).toBe(1);
    await page.goto(`${w.base}${new URL(api[0]!.dashboard_url).pathname}`);
    await page.locator('body[data-ready]').waitFor();
    const remedy = page.locator('.remediation');
    await expect(remedy.textContent()).resolves.toContain(`sigsync integration reconnect ${w.globex.integration.id}`);
    await expect(remedy.textContent()).resolves.toContain('invalid_grant: the service account key was deleted');
    expect(await page.locator('#sync-now').isDisabled()).toBe(true);
    await w.screenshot(page, 'integration-access-lost');

    // Acme's integration, asked for with Globex's session: not found, on the page and in the API.
    const acmeIntegration = w.acme.integrations.googleDirectory.id;
    expect((await context.request.get(`${w.base}/console/api/integrations/${acmeIntegration}`)).status()).toBe(404);
    expect(
      (
        await context.request.get(
          `${w.base}/v1/integrations/sync/${(await w.t.ctx.pool.query<{ id: string }>('select id from sync_runs where workspace_id = $1 limit 1', [w.acme.workspaceId])).rows[0]!.id}`,
        )
      ).status(),
    ).toBe(404);
    await page.goto(`${w.base}/console/integrations/${acmeIntegration}`);
    await expect.poll(() => page.locator('[role="alert"]').textContent()).toContain('No such integration');
    await context.close();
  });

  it('actions need the CSRF token: a request with the cookie alone is refused', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const id = w.acme.integrations.googleDirectory.id;
    const statuses = await page.evaluate(async (id) => {
      const post = (url: string) => fetch(url, { method: 'POST', credentials: 'same-origin' }).then((r) => r.status);
      return [await post(`/console/api/integrations/${id}/sync`), await post('/v1/integrations/sync'), await post('/console/sign-out')];
    }, id);
    expect(statuses).toEqual([403, 403, 403]);
    expect((await w.t.ctx.pool.query(`select 1 from sync_runs where integration_id = $1 and status = 'running'`, [id])).rowCount).toBe(0);
    await context.close();
  });

  it('the Content-Security-Policy blocks an injected inline script', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const csp = (await page.goto(`${w.base}/console/integrations`))!.headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    await page.locator('body[data-ready]').waitFor();
    // Page-side code as text: the test files are typed for Node, not the DOM.
    // The violation is reported as an event, later: wait for it (a busy machine is slow), not for a span of time.
    const violations = await page.evaluate(`(async () => {
      const seen = [];
      const reported = new Promise((r) => document.addEventListener('securitypolicyviolation', (e) => r(seen.push(e.violatedDirective))));
      const s = document.createElement('script');
      s.textContent = 'window.injected = true;';
      document.body.append(s);
      // An inline script that the policy lets through runs as it is appended: then nothing is reported.
      if (!window.injected) await reported;
      return { seen, injected: window.injected ?? false };
    })()`);
    expect(violations).toEqual({ seen: ['script-src-elem'], injected: false });
    await context.close();
  });

  it('keyboard: skip link, navigation and links reach every control; axe reports no serious violation', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement?.id')).toBe('main');
    // From the main landmark, Tab reaches the first integration's link; Enter opens it.
    await page.keyboard.press('Tab');
    const focused = await page.evaluate<string | undefined>("document.activeElement?.getAttribute('href')");
    expect(focused).toMatch(/^\/console\/integrations\/[0-9a-f-]{36}$/);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${w.base}${focused}`);
    await page.locator('body[data-ready]').waitFor();

    for (const path of ['/console/integrations', focused!]) {
      await page.goto(`${w.base}${path}`);
      await page.locator('body[data-ready]').waitFor();
      // Evaluated through the debugging protocol, which the page's CSP does not govern.
      await page.evaluate(axeSource);
      const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
      expect(
        result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id),
        path,
      ).toEqual([]);
    }
    await context.close();
  });

  it("a retry holds at most 100 installations, queues only its own workspace's, and a session retries at most RATE_LIMIT_INSTALL times a minute", async () => {
    const { context } = await w.signIn(w.acme.workspaceId);
    const csrf = ((await (await context.request.get(`${w.base}/console/api/session`)).json()) as { data: { csrf_token: string } }).data.csrf_token;
    const retry = (ids: unknown) =>
      context.request.post(`${w.base}/console/api/installations/retry`, { headers: { 'x-csrf-token': csrf }, data: { installation_ids: ids } });
    const tooMany = await retry(Array.from({ length: 101 }, () => crypto.randomUUID()));
    expect(tooMany.status()).toBe(422);
    expect(((await tooMany.json()) as { details: { field: string; code: string }[] }).details).toEqual([
      expect.objectContaining({ field: 'installation_ids', code: 'too_big' }),
    ]);
    // Globex's installation ids mean nothing to Acme's session: nothing is queued.
    const { rows } = await w.t.ctx.pool.query<{ id: string }>('select id from installations where workspace_id <> $1 limit 1', [w.acme.workspaceId]);
    const foreign = await retry(rows.length ? [rows[0]!.id] : [crypto.randomUUID()]);
    expect(foreign.status()).toBe(202);
    expect(await foreign.json()).toEqual({ data: { queued: 0 } });
    const limit = w.t.ctx.config.RATE_LIMIT_INSTALL;
    const statuses = [];
    for (let n = 3; n <= limit; n++) statuses.push((await retry([crypto.randomUUID()])).status());
    expect(statuses.every((s) => s === 202)).toBe(true);
    const over = await retry([crypto.randomUUID()]);
    expect(over.status()).toBe(429);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    await context.close();
  });

  it('"Needs attention" lists the failed mailbox under its integration with cause and fix; once the cause is fixed, a retry from the page installs it', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const failures = (await w.acmeApi.request<{ data: ApiFailure[] }>('GET', '/v1/installations?status=failed')).body.data;
    expect(failures.map((f) => f.email.address)).toEqual([NO_GMAIL.email]);
    const f = failures[0]!;
    // The integrations table says so in the integration's row, linking to its list.
    const row = page.locator(`#integrations tbody tr[data-integration-id="${f.integration.id}"]`);
    expect(await row.locator('td').nth(4).textContent()).toBe('1 mailbox failed');
    const section = page.locator(`#attention-${f.integration.id}`);
    expect(await section.locator('h3').textContent()).toBe(`${f.integration.name}: 1 failed mailbox`);
    const item = section.locator(`tbody tr[data-installation-id="${f.id}"]`);
    const cells = await item.locator('td').allTextContents();
    expect(cells.slice(1, 6)).toEqual([NO_GMAIL.email, 'primary', expect.any(String), 'forbidden: sendAs.patch: Mail service not enabled', f.fix]);
    expect(f.fix).toMatch(/turn mail on for the user/);
    await w.screenshot(page, 'integrations-needs-attention');

    // The cause is fixed at the provider (Gmail turned on for the user), then the selection is retried.
    w.emu.google.tenant.noMailbox.delete(NO_GMAIL.email.toLowerCase());
    await item.getByRole('checkbox').check();
    await section.getByRole('button', { name: 'Retry selected' }).click();
    await expect.poll(() => page.locator('.retry-status').first().textContent()).toContain('Queued 1 install');
    await expect.poll(() => page.locator(`tr[data-installation-id="${f.id}"]`).count(), { timeout: 120_000 }).toBe(0);
    expect(await page.locator('#needs-attention').textContent()).toContain('No mailbox install has failed.');
    expect(await row.locator('td').nth(4).textContent()).toBe('');
    const stored = await w.t.ctx.pool.query<{ status: string }>('select status from installations where id = $1', [f.id]);
    expect(stored.rows[0]!.status).toBe('installed');
    expect(w.emu.google.signatures()[NO_GMAIL.email]).toContain(NO_GMAIL.given_name);
    await context.close();
  });
});
