/**
 * The console's Privacy page in headless Chromium: the workspace's tracking modes and retention as
 * GET /v1/workspace/privacy_settings answers them, changed from the page (with the session's CSRF
 * token, recorded in the audit trail as the signed-in person), the answer's effects shown, and the
 * opt-out link to copy. Another workspace's settings are untouched.
 */
import { describe, expect, it } from 'vitest';
import { privacySettings } from '../../src/db/workspaces.ts';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

interface Settings {
  views_tracking: string;
  clicks_tracking: string;
  retention_days: number | null;
  opt_out_url: string;
}

describe('console: privacy', () => {
  const w = useConsoleWorld();

  it('shows the modes and retention, saves a change with its effects, and offers the opt-out link', async () => {
    const before = (await w.acmeApi.request<{ data: Settings }>('GET', '/v1/workspace/privacy_settings')).body.data;
    expect(before).toMatchObject({ views_tracking: 'aggregate', clicks_tracking: 'per_person', retention_days: null });
    const keyed = await w.t.ctx.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM clicks WHERE workspace_id = $1 AND clicker IS NOT NULL', [
      w.acme.workspaceId,
    ]);
    expect(keyed.rows[0]!.n).toBeGreaterThan(0);

    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.getByRole('link', { name: 'Privacy' }).click();
    await page.locator('body[data-ready="privacy"]').waitFor();
    const views = page.getByLabel('Views (tracked images)');
    const clicks = page.getByLabel('Clicks (tracked links)');
    const retention = page.getByLabel(/Retention/);
    expect(await views.inputValue()).toBe('aggregate');
    expect(await clicks.inputValue()).toBe('per_person');
    expect(await retention.inputValue()).toBe('');
    expect(await page.getByRole('textbox', { name: 'Opt-out link to copy' }).inputValue()).toBe(before.opt_out_url);
    expect(before.opt_out_url).toMatch(/\/o\/[A-Za-z0-9_-]+$/);

    await clicks.selectOption('aggregate');
    await retention.fill('90');
    await page.getByRole('button', { name: 'Save' }).click();
    const effects = page.locator('#effects li');
    await expect.poll(() => effects.count()).toBe(2);
    const said = await effects.allTextContents();
    expect(said[0]).toBe(`clicks: counts only from now on; the per-person key was removed from ${keyed.rows[0]!.n} rows already recorded (their counts stay)`);
    expect(said[1]).toMatch(/^retention: raw rows and visitors older than 90 days/);
    expect(await privacySettings(w.t.ctx.pool, w.acme.workspaceId)).toEqual({ views_tracking: 'aggregate', clicks_tracking: 'aggregate', retention_days: 90 });
    const left = await w.t.ctx.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM clicks WHERE workspace_id = $1 AND clicker IS NOT NULL', [
      w.acme.workspaceId,
    ]);
    expect(left.rows[0]!.n).toBe(0);
    await w.screenshot(page, 'privacy');

    // Recorded as the person the sign-in link named, with what was changed.
    const audit = (
      await w.acmeApi.request<{ data: { action: string; actor: { kind: string; name: string }; details: Record<string, unknown> }[] }>(
        'GET',
        '/v1/audit_entries?per_page=5',
      )
    ).body.data[0]!;
    expect(audit).toMatchObject({
      action: 'privacy_settings.update',
      actor: { kind: 'console', name: 'test' },
      details: { views_tracking: 'aggregate', clicks_tracking: 'aggregate', retention_days: 90 },
    });

    // Back to the default retention: the empty field sends null.
    await retention.fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => (await privacySettings(w.t.ctx.pool, w.acme.workspaceId))?.retention_days).toBe(null);
    await expect.poll(() => effects.allTextContents()).toEqual([expect.stringMatching(/^retention: .*deployment default/)]);

    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

    // Without the session's CSRF token the change is refused; with a bad value it names the field.
    const refused = await context.request.patch(`${w.base}/v1/workspace/privacy_settings`, { data: { privacy_settings: { views_tracking: 'per_person' } } });
    expect(refused.status()).toBe(403);
    const csrf = await page.evaluate<string>("fetch('/console/api/session').then((r) => r.json()).then((b) => b.data.csrf_token)");
    const bad = await context.request.patch(`${w.base}/v1/workspace/privacy_settings`, {
      headers: { 'x-csrf-token': csrf },
      data: { privacy_settings: { views_tracking: 'everyone' } },
    });
    expect(bad.status()).toBe(422);
    expect(((await bad.json()) as { details: { field: string }[] }).details.map((d) => d.field)).toContain('privacy_settings.views_tracking');
    expect((await privacySettings(w.t.ctx.pool, w.acme.workspaceId))?.views_tracking).toBe('aggregate');
    await context.close();

    // Globex's settings did not move.
    expect(await privacySettings(w.t.ctx.pool, w.globex.workspaceId)).toMatchObject({ clicks_tracking: 'per_person', retention_days: null });
  });
});
