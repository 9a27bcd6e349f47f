/**
 * The console's Activity page in headless Chromium: the workspace's audit trail as the API answers
 * it, with the person a sign-in link named; another workspace's entries never show.
 */
import { describe, expect, it } from 'vitest';
import { acmePeople } from '../../emulators/acme.ts';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

interface Entry {
  action: string;
  actor: { kind: string; name: string };
}

describe('console: activity', () => {
  const w = useConsoleWorld();

  it("lists who did what, newest first, as GET /v1/audit_entries does, with the session's person", async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    // An action from the page: a dry run of a mailbox, recorded as the signed-in person.
    const csrf = await page.evaluate<string>("fetch('/console/api/session').then((r) => r.json()).then((b) => b.data.csrf_token)");
    const dry = await context.request.post(`${w.base}/console/api/mailboxes/${encodeURIComponent(acmePeople()[0]!.email)}/replay`, {
      headers: { 'x-csrf-token': csrf },
      data: { dry_run: true },
    });
    expect(dry.status()).toBe(200);

    await page.getByRole('link', { name: 'Activity' }).click();
    await page.locator('body[data-ready="activity"]').waitFor();
    const api = (await w.acmeApi.request<{ data: Entry[] }>('GET', '/v1/audit_entries?per_page=50')).body.data;
    expect(api.slice(0, 2).map((e) => [e.action, e.actor.name])).toEqual([
      ['mailbox.replay_dry_run', 'test'],
      ['console.sign_in', 'test'],
    ]);
    // The story published and assigned the signature through the API, with Acme's key.
    expect(api.map((e) => e.action)).toEqual(expect.arrayContaining(['signature.publish', 'assignments.replace']));
    const rows = page.locator('#audit tbody tr');
    await expect.poll(() => rows.count()).toBe(api.length);
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-action'), tr.cells[1]!.textContent]));
    expect(shown).toEqual(
      api.map((e) => [e.action, `${e.actor.name} (${e.actor.kind === 'api_key' ? 'API key' : e.actor.kind === 'cli' ? 'CLI' : 'console'})`]),
    );
    await w.screenshot(page, 'activity');

    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await context.close();

    // Globex's session sees none of Acme's entries.
    const globex = await w.signIn(w.globex.workspaceId);
    await globex.page.goto(`${w.base}/console/activity`);
    await globex.page.locator('body[data-ready="activity"]').waitFor();
    const globexShown = await globex.page.locator('#audit tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')));
    expect(globexShown).toEqual(['console.sign_in']);
    await globex.context.close();
  });
});
