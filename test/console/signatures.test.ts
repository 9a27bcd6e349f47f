/**
 * The console's signatures page in headless Chromium: each signature rendered for the chosen
 * teammate (their own values in the frame), how it shows in the workspace's mail clients, and who
 * it is assigned to, as the API says.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { acmePeople } from '../../emulators/acme.ts';
import { SOCIAL_ICON_BASE_URL } from '../../src/render/social.ts';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

const PERSON = acmePeople().find((p) => p.provider === 'microsoft')!;
/** A 1×1 PNG. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** A signature's section once filled: sections fill as they come near the screen, so it is scrolled to first. */
async function filled(page: Page, signatureId: string) {
  const section = page.locator(`section[data-signature-id="${signatureId}"]`);
  await section.scrollIntoViewIfNeeded();
  await page.locator(`section[data-signature-id="${signatureId}"][data-loaded]`).waitFor();
  return section;
}

describe('console: signatures', () => {
  const w = useConsoleWorld();

  it("renders each signature for the chosen teammate and lists the API's assignments", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    const teammate = (
      await w.t.ctx.pool.query<{ id: string; display_name: string }>(
        'select t.id, t.display_name from teammates t join emails e on e.teammate_id = t.id where t.workspace_id = $1 and lower(e.address) = $2',
        [w.acme.workspaceId, PERSON.email],
      )
    ).rows[0]!;
    await page.getByRole('link', { name: 'Signatures' }).click();
    await page.locator('body[data-ready="signatures"]').waitFor();
    await page.getByLabel('Render for').selectOption(teammate.id);
    await page.getByRole('button', { name: 'Show' }).press('Enter');
    await page.waitForURL(/teammate=/);
    await page.locator('body[data-ready="signatures"]').waitFor();

    const section = await filled(page, w.acme.signatureId);
    const primary = section.locator('figure[data-kind="primary"] iframe');
    await expect(primary.contentFrame().locator('body').textContent()).resolves.toContain(PERSON.title);
    // No script runs in a preview; the frame is as tall as the signature (nothing cut off).
    expect(await primary.getAttribute('sandbox')).toBe('allow-same-origin');
    const heights = () =>
      primary.evaluate((f) => {
        const e = f as unknown as { clientHeight: number; contentDocument: { documentElement: { scrollHeight: number } } };
        return { frame: e.clientHeight, content: e.contentDocument.documentElement.scrollHeight };
      });
    await expect
      .poll(async () => {
        const x = await heights();
        return x.content > 0 && x.frame >= x.content;
      })
      .toBe(true);

    const api = (await w.acmeApi.request<{ data: { groups: { name: string }[] } }>('GET', `/v1/signatures/${w.acme.signatureId}/assignments`)).body.data;
    const shown = await section.locator('table tbody tr td:nth-child(2)').allTextContents();
    expect(shown.sort()).toEqual(api.groups.map((g) => g.name).sort());
    expect(shown.length).toBeGreaterThan(0);
    await w.screenshot(page, 'signatures');

    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await context.close();
  });

  it('a signature with see-through text shows the warning for Outlook for Windows, in plain words', async () => {
    const tree = {
      type: 'stack',
      children: [{ type: 'text', tokens: [{ type: 'textToken', value: 'Kind regards from Acme', textStyle: { color: 'rgba(11, 37, 69, 0.5)' } }] }],
    };
    const created = await w.acmeApi.request<{ data: { id: string } }>('POST', '/v1/signatures', { signature: { name: 'See-through', draft_content: tree } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect((await w.acmeApi.request('POST', `/v1/signatures/${id}/publish`)).status).toBe(200);
    const report = (
      await w.acmeApi.request<{ data: { kinds: { kind: string; issues: { message: string }[] }[] } }>(
        'GET',
        `/v1/signatures/${id}/compatibility?content=published`,
      )
    ).body.data;
    const expected = 'In Outlook for Windows, the see-through text colour rgba(11,37,69,0.5) of the signature shows as the solid #8592a2.';
    expect(report.kinds[0]!.issues.map((i) => i.message)).toContain(expected);

    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.goto(`${w.base}/console/signatures`);
    await page.locator('body[data-ready="signatures"]').waitFor();
    const warnings = (await filled(page, id)).locator('.compatibility li');
    const shown = await warnings.allTextContents();
    expect(shown).toContain(`New messages: ${expected}`);
    // Every client issue of the report is on the page, none more.
    expect(shown.length).toBe(report.kinds.reduce((n, k) => n + k.issues.length, 0));
    // The story's own signature has no see-through text.
    expect(await (await filled(page, w.acme.signatureId)).locator('.compatibility').textContent()).not.toContain('see-through');
    await page.locator(`section[data-signature-id="${id}"]`).scrollIntoViewIfNeeded();
    await w.screenshot(page, 'signatures-compatibility');

    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await context.close();
  });

  it("a preview shows the signature's images from the hosts the service knows (the social icons), and no other host", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    // The icons' host, answered by the browser itself: these machines reach no other host.
    const served: string[] = [];
    await context.route(`${SOCIAL_ICON_BASE_URL}**`, (route) => {
      served.push(route.request().url());
      return route.fulfill({ contentType: 'image/png', body: PIXEL });
    });
    const csp = (await page.goto(`${w.base}/console/signatures`))!.headers()['content-security-policy']!;
    // Not every https host: an image linked from anywhere else stays unfetched.
    expect(
      csp
        .split('; ')
        .find((d) => d.startsWith('img-src'))!
        .split(' '),
    ).not.toContain('https:');
    await page.locator('body[data-ready="signatures"]').waitFor();
    const frame = (await filled(page, w.acme.signatureId)).locator('figure[data-kind="primary"] iframe').contentFrame();
    const icons = frame.locator(`img[src^="${SOCIAL_ICON_BASE_URL}"]`);
    expect(await icons.count()).toBeGreaterThan(0);
    // Every icon loaded: a blocked or failed image has no natural width.
    await expect
      .poll(() => icons.evaluateAll((imgs) => imgs.map((i) => (i as unknown as { complete: boolean; naturalWidth: number }).naturalWidth)))
      .not.toContain(0);
    expect(served.length).toBeGreaterThan(0);
    await context.close();
  });

  it("another workspace cannot render this workspace's signature", async () => {
    const { context } = await w.signIn(w.globex.workspaceId);
    const teammate = (await w.t.ctx.pool.query<{ id: string }>('select id from teammates where workspace_id = $1 limit 1', [w.acme.workspaceId])).rows[0]!;
    expect((await context.request.get(`${w.base}/console/api/signatures/${w.acme.signatureId}/preview?teammate=${teammate.id}`)).status()).toBe(404);
    await context.close();
  });
});
