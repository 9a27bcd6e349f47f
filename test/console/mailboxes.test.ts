/**
 * The console's mailbox page in headless Chromium: a support engineer finds the mailbox whose
 * install failed, sees the provider's answer, dry-runs a replay (nothing changes), fixes the cause
 * at the provider and replays from the page (the installation and the mailbox change); and sees
 * which Outlook add-in clients fetched the address's signature, and whether they hold the current one.
 */
import { describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { acmePeople } from '../../emulators/acme.ts';
import { fixFor } from '../../src/installations/fixes.ts';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

const NO_GMAIL = acmePeople().find((p) => p.provider === 'google' && p.no_mailbox)!;
const OUTLOOK = acmePeople().find((p) => p.provider === 'microsoft')!;
const GMAIL = acmePeople().find((p) => p.provider === 'google' && !p.no_mailbox)!;

describe('console: mailboxes', () => {
  const w = useConsoleWorld();
  const installation = async () =>
    // Every kind: the demo signature's reply and internal variants are not_supported in Gmail and Slack.
    (
      await w.t.ctx.pool.query<{ status: string; error_message: string | null; name: string }>(
        `select s.status, s.error_message, i.name from installations s join emails e on e.id = s.email_id join integrations i on i.id = s.integration_id
          where s.workspace_id = $1 and lower(e.address) = $2 order by i.name, s.kind`,
        [w.acme.workspaceId, NO_GMAIL.email],
      )
    ).rows;

  it("explains in words with the fix, folds the raw answers away, fits a 1,280 px window, and its dry run shows the CLI's fix", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const open = async (address: string) => {
      await page.goto(`${w.base}/console/mailboxes/${encodeURIComponent(address)}`);
      await page.locator('body[data-ready="mailboxes"]').waitFor();
    };
    const width = () => page.evaluate<number>('document.documentElement.scrollWidth');

    // An installed Gmail mailbox: the provider's raw answer holds the whole signature HTML, a long line.
    await open(GMAIL.email);
    expect(await width()).toBeLessThanOrEqual(1280);
    const raw = page.locator('#raw-answers details');
    expect(await raw.count()).toBeGreaterThan(0);
    expect(await raw.evaluateAll((ds) => ds.every((d) => !(d as unknown as { open: boolean }).open))).toBe(true);
    await raw.evaluateAll((ds) => ds.forEach((d) => ((d as unknown as { open: boolean }).open = true)));
    const answer = (await raw.first().locator('pre').textContent())!;
    expect(answer.length).toBeGreaterThan(1000);
    expect(answer).toContain('"signature"');
    expect(await width(), 'with the raw answers open').toBeLessThanOrEqual(1280);
    const installed = page.locator('#installations tbody tr[data-status="installed"]').first();
    expect(await installed.locator('td').nth(5).textContent()).toBe('Installed: the provider accepted the signature.');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await page.locator('#replay-report').waitFor();
    expect(await width(), 'with the dry run side by side').toBeLessThanOrEqual(1280);
    await w.screenshot(page, 'mailbox-installed-raw');

    // The failing one: the provider's message in words, its fix, and the dry run says the same fix.
    await open(NO_GMAIL.email);
    const failed = page.locator('#installations tbody tr[data-status="failed"]');
    expect(await failed.locator('td').nth(5).textContent()).toBe('forbidden: sendAs.patch: Mail service not enabled');
    expect(await failed.locator('td').nth(6).textContent()).toBe(fixFor('failed', 'forbidden'));
    await page.getByRole('button', { name: 'Dry run' }).click();
    const fix = page.locator('#replay-report article .fix').first();
    await fix.waitFor();
    expect(await fix.textContent()).toBe(`Fix: ${fixFor('failed', 'forbidden')}`);
    expect(await width()).toBeLessThanOrEqual(1280);
    await w.screenshot(page, 'mailbox-failed-fix');
    await context.close();
  });

  it('search → installations as stored → dry run changes nothing → replay installs', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.getByRole('link', { name: 'Mailboxes' }).click();
    await page.locator('body[data-ready="mailboxes"]').waitFor();
    await page.getByLabel('Email address').fill(NO_GMAIL.email.split('@')[0]!);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: NO_GMAIL.email }).click();
    await page.locator('body[data-ready="mailboxes"]').waitFor();
    await w.screenshot(page, 'mailbox-search');

    const stored = await installation();
    expect(stored.map((r) => r.status)).toContain('failed');
    const rows = page.locator('#installations tbody tr');
    await expect.poll(() => rows.count()).toBe(stored.length);
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({ name: tr.cells[0]!.textContent, status: tr.getAttribute('data-status'), message: tr.cells[5]!.textContent })),
    );
    expect(shown.map((r) => ({ name: r.name, status: r.status }))).toEqual(stored.map((r) => ({ name: r.name, status: r.status })));
    expect(shown.find((r) => r.status === 'failed')!.message).toContain('Mail service not enabled');

    // The cause is fixed at the provider; a dry run shows the HTML a replay would write and changes nothing.
    w.emu.google.tenant.noMailbox.delete(NO_GMAIL.email.toLowerCase());
    await page.getByRole('button', { name: 'Dry run' }).click();
    const gmail = page.locator('#replay-report article[data-outcome="dry_run"]').first();
    await gmail.waitFor();
    expect(await gmail.locator('iframe').count()).toBe(1);
    const frameText = await gmail.locator('iframe').contentFrame().locator('body').textContent();
    expect(frameText).toContain(NO_GMAIL.given_name);
    // Nothing was installed there before, so there is nothing to diff against: the frame shows the new HTML.
    expect(await gmail.locator('pre.diff').count()).toBe(0);
    expect((await installation()).map((r) => r.status)).toEqual(stored.map((r) => r.status));
    expect(w.emu.google.signatures()[NO_GMAIL.email]).toBeFalsy();
    await w.screenshot(page, 'mailbox-dry-run');

    // Replay: written to Gmail, and the page shows the new status from the server.
    await page.getByRole('button', { name: 'Replay now' }).click();
    await expect.poll(() => page.locator('#installations tbody tr[data-status="failed"]').count()).toBe(0);
    expect((await installation()).map((r) => r.status)).not.toContain('failed');
    expect(w.emu.google.signatures()[NO_GMAIL.email]).toContain(NO_GMAIL.given_name);
    await w.screenshot(page, 'mailboxes');
    await context.close();
  });

  it("a fetch by the Outlook add-in shows as its platform's row, with the version it received", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const open = async () => {
      await page.goto(`${w.base}/console/mailboxes/${encodeURIComponent(OUTLOOK.email)}`);
      await page.locator('body[data-ready="mailboxes"]').waitFor();
    };
    await open();
    expect(await page.locator('#addin-clients').count()).toBe(0);

    const addinKey = (await createApiKey(w.t.ctx.pool, w.acme.workspaceId, 'console test', 'addin')).key;
    const fetched = await fetch(`${w.base}/v1/addin/signature?email=${encodeURIComponent(OUTLOOK.email)}&platform=mac&client_version=16.89.1`, {
      headers: { authorization: `Bearer ${addinKey}` },
    });
    expect(fetched.status, await fetched.text()).toBe(200);
    const etag = fetched.headers.get('etag')!;

    await open();
    const rows = page.locator('#addin-clients tbody tr');
    expect(await rows.count()).toBe(1);
    const row = rows.first();
    expect(await row.getAttribute('data-platform')).toBe('mac');
    expect(await row.getAttribute('data-current')).toBe('true');
    const cells = await row.locator('td').allTextContents();
    expect(cells[0]).toBe('Outlook for Mac');
    expect(cells[1]).toBe('16.89.1');
    expect(cells[2]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(cells[3]).toBe(`current ${etag.replace(/"/g, '').slice(0, 12)}`);
    await w.screenshot(page, 'mailbox-addin-clients');
    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await context.close();
  });

  it("another workspace's session cannot find, read or replay the mailbox", async () => {
    const { context } = await w.signIn(w.globex.workspaceId);
    const search = (await (await context.request.get(`${w.base}/console/api/mailboxes?q=acme`)).json()) as { data: unknown[] };
    expect(search.data).toEqual([]);
    expect((await context.request.get(`${w.base}/console/api/mailboxes/${encodeURIComponent(NO_GMAIL.email)}`)).status()).toBe(404);
    const csrf = ((await (await context.request.get(`${w.base}/console/api/session`)).json()) as { data: { csrf_token: string } }).data.csrf_token;
    const replay = await context.request.post(`${w.base}/console/api/mailboxes/${encodeURIComponent(NO_GMAIL.email)}/replay`, {
      headers: { 'x-csrf-token': csrf },
      data: { dry_run: true },
    });
    expect(replay.status()).toBe(404);
    await context.close();
  });

  it('mailbox page: keyboard reaches the actions; axe reports no serious violation', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.goto(`${w.base}/console/mailboxes/${encodeURIComponent(NO_GMAIL.email)}`);
    await page.locator('body[data-ready]').waitFor();
    await page.getByRole('button', { name: 'Dry run' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#replay-report').waitFor();
    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await context.close();
  });
});
