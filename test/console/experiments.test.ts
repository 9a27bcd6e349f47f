/**
 * The console's Experiments page in headless Chromium, on the sandbox's demo campaign: the campaign's
 * experiments listed, one created from the page (a refused banner named by its field first), started,
 * a person's click on an arm's banner counted, and the figures on the page equal to the API's
 * (GET /v1/experiments/{id}): each arm's rate with its interval, lift and chance to win, the decision's
 * reason, the exposures still needed; the sample-ratio warning as the API reports it; Promote and Stop.
 * Every action carries the session's CSRF token and is in the audit trail as the signed-in person;
 * another workspace sees none of it. Screenshot: test-output/console/experiments.png.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { assignArm } from '../../src/experiments/assignment.ts';
import { waitForIdle } from '../../src/sandbox/flow.ts';
import { loadAcme, sandboxBannerTree } from '../../src/sandbox/seed.ts';
import { DEADLINE_MS } from '../helpers/cli.ts';
import type { ExperimentView } from '../helpers/experiments.ts';
import { axeSource } from './axe.ts';
import { useConsoleWorld } from './support.ts';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const VARIANT_HREF = 'https://acme.test/summit?banner=seats';

/** Banner B: the demo banner with other words and its own address, so its links are told apart. */
function variantBanner() {
  const c = loadAcme().campaign;
  return sandboxBannerTree({ ...c, text: 'Seats for the Acme Summit are going fast. ', link_text: 'Book yours', href: VARIANT_HREF });
}

// What the page shows, formatted as en-US does (the browser's locale in these tests).
const pct = (x: number) => new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(x);
const signed = (x: number) =>
  new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1, signDisplay: 'exceptZero' }).format(x);
const chance = (x: number) => new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(x);
const num = (x: number) => new Intl.NumberFormat('en-US').format(x);

/** The arms table's rows, cell texts in the page's order. */
async function shownArms(page: Page): Promise<string[][]> {
  return page.locator('#arms tbody tr').evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())));
}

function expectedArms(x: ExperimentView): string[][] {
  return x.results.arms.map((r, i) => {
    const arm = x.arms.find((a) => a.id === r.id)!;
    return [
      i === 0 ? `${arm.name} (control)` : arm.name,
      String(arm.weight),
      num(r.senders),
      num(r.exposures),
      num(r.clicks),
      `${pct(r.rate)} (${pct(r.interval.low)} to ${pct(r.interval.high)})`,
      i === 0 ? 'control' : `${signed(r.lift!.estimate)} (${signed(r.lift!.low)} to ${signed(r.lift!.high)})`,
      chance(r.chance_to_win),
      pct(r.expected_loss),
      x.mode === 'ab' && !x.promoted_arm_id && ['running', 'concluded', 'stopped'].includes(x.status) ? 'Promote' : '',
    ];
  });
}

describe('console: experiments', () => {
  const w = useConsoleWorld();
  const get = async (id: string) => (await w.acmeApi.request<{ data: ExperimentView }>('GET', `/v1/experiments/${id}`)).body.data;
  let id: string;

  it('creates an experiment on the demo campaign, starts it, and shows the API’s figures for each arm', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.getByRole('link', { name: 'Experiments' }).click();
    await page.locator('body[data-ready="experiments"]').waitFor();
    expect(await page.locator('select#campaign').inputValue()).toBe(w.acme.campaignId);
    await page.locator('#no-experiments').waitFor();

    // Two to four arms: the buttons stop at each end.
    const armRows = page.locator('fieldset.arm');
    for (let i = 0; i < 2; i++) await page.getByRole('button', { name: 'Add an arm' }).click();
    expect(await armRows.count()).toBe(4);
    expect(await page.getByRole('button', { name: 'Add an arm' }).isDisabled()).toBe(true);
    for (let i = 0; i < 2; i++) await page.getByRole('button', { name: 'Remove the last arm' }).click();
    expect(await armRows.count()).toBe(2);
    expect(await page.getByRole('button', { name: 'Remove the last arm' }).isDisabled()).toBe(true);

    // A banner that is not a block tree: refused, the field named beside the form and marked on its input; nothing created.
    await page.getByLabel('Name', { exact: true }).fill('Summit banner: urgency');
    await page.getByLabel('Arm 2 banner').selectOption('json');
    await page.getByLabel('Arm 2 block tree (JSON)').fill('{"type": "stack", "children": "not a list"}');
    await page.getByRole('button', { name: 'Create the experiment' }).click();
    await page.locator('#refused-fields li').first().waitFor();
    expect((await page.locator('#refused-fields li').allTextContents()).join('\n')).toMatch(/^experiment\.arms\[1\]\.content/m);
    expect(await page.getByLabel('Arm 2 banner').getAttribute('aria-invalid')).toBe('true');
    const none = await w.acmeApi.request<{ data: unknown[] }>('GET', `/v1/marketing_campaigns/${w.acme.campaignId}/experiments`);
    expect(none.body.data).toEqual([]);

    // Arm 1 keeps this campaign's banner; arm 2 gets the variant, weighted 1 to 1.
    await page.getByLabel('Arm 2 block tree (JSON)').fill(JSON.stringify(variantBanner()));
    await page.getByRole('button', { name: 'Create the experiment' }).click();
    await page.waitForURL(/\/console\/experiments\/[0-9a-f-]{36}$/);
    await page.locator('body[data-ready="experiments"]').waitFor();
    id = page.url().split('/').at(-1)!;
    const created = await get(id);
    expect(created).toMatchObject({ name: 'Summit banner: urgency', mode: 'ab', status: 'draft', marketing_campaign_id: w.acme.campaignId });
    expect(created.arms.map((a) => [a.name, a.weight])).toEqual([
      ['Control', 1],
      ['Banner B', 1],
    ]);
    expect(created.arms[0]!.content).toEqual(sandboxBannerTree(loadAcme().campaign));
    expect(created.arms[1]!.content).toEqual(variantBanner());

    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(async () => (await get(id)).status, { timeout: DEADLINE_MS }).toBe('running');
    await page.locator('#action-status .notice').waitFor();
    await waitForIdle(w.t.ctx.pool);

    // A person follows arm B's banner in the Gmail mailbox of a sender the experiment gave arm B.
    const arms = created.arms.map((a) => ({ id: a.id, weight: a.weight }));
    const senders = await w.t.ctx.pool.query<{ id: string; address: string }>(
      `select t.id, e.address from teammates t join emails e on e.teammate_id = t.id where t.workspace_id = $1 and t.deleted_at is null order by e.address`,
      [w.acme.workspaceId],
    );
    const gmail = w.emu.google.signatures();
    const reader = senders.rows.find((s) => gmail[s.address] && assignArm(id, s.id, arms) === created.arms[1]!.id);
    expect(reader, 'a Gmail sender in arm B').toBeDefined();
    expect(gmail[reader!.address]).toContain('Seats for the Acme Summit are going fast.');
    const link = [...gmail[reader!.address]!.matchAll(/<a href="(https?:\/\/[^"]*\/c\/[^"]+)"[^>]*>(?:(?!<\/a>)[\s\S])*Book yours/g)].map(
      (m) => new URL(m[1]!).pathname,
    )[0];
    expect(link, 'the banner link of arm B').toBeDefined();
    const followed = await fetch(`${w.base}${link}`, { redirect: 'manual', headers: { 'user-agent': CHROME } });
    expect(followed.status).toBe(302);
    expect(followed.headers.get('location')).toContain('acme.test/summit');
    await expect.poll(async () => (await get(id)).results.arms[1]!.clicks, { timeout: DEADLINE_MS }).toBe(1);

    await page.reload();
    await page.locator('body[data-ready="experiments"]').waitFor();
    const x = await get(id);
    expect(await shownArms(page)).toEqual(expectedArms(x));
    // The reason as the API words it, with the arms' names where it names their ids.
    // The API's reason names the arms by their names ("Arm Banner B needs about …"); the page shows it as it is.
    expect(x.results.decision.reason).not.toMatch(new RegExp(x.arms.map((a: { id: string }) => a.id).join('|')));
    expect(await page.locator('#decision-reason').textContent()).toBe(x.results.decision.reason);
    expect(await page.locator('#exposures-needed').textContent()).toBe(
      x.results.exposures_needed_per_arm === null
        ? 'No estimate of the exposures still needed.'
        : `A decision likely needs about ${num(x.results.exposures_needed_per_arm)} more exposures per arm.`,
    );
    expect(await page.locator('#srm-warning').count()).toBe(x.results.srm.mismatch ? 1 : 0);
    // Never a rate alone: every rate on the page comes with its interval.
    for (const row of await shownArms(page)) expect(row[5]).toMatch(/^\d+\.\d\d% \(\d+\.\d\d% to \d+\.\d\d%\)$/);
    await w.screenshot(page, 'experiments');

    await page.evaluate(axeSource);
    const result = await page.evaluate<{ violations: { id: string; impact: string }[] }>('axe.run()');
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);

    // The list shows it, running.
    await page.goto(`${w.base}/console/experiments?campaign=${w.acme.campaignId}`);
    await page.locator('body[data-ready="experiments"]').waitFor();
    expect(await page.locator(`#experiments tr[data-experiment-id="${id}"] td`).allTextContents()).toEqual(
      expect.arrayContaining(['Summit banner: urgency', 'A/B', 'running', '2']),
    );
    // The page fits the window: nothing wider than 1,280 px, the form included.
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(1280);
    await w.screenshot(page, 'experiments-list');
    await context.close();
  });
  it('shows a sample-ratio mismatch the API reports, and halts on it', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    // The API's answer as it is, with the mismatch the statistics report when the split is not the weights'.
    await page.route(`${w.base}/v1/experiments/${id}`, async (route) => {
      const res = await route.fetch();
      const body = (await res.json()) as { data: ExperimentView };
      body.data.results.srm = { p_value: 0.00042, mismatch: true };
      body.data.results.decision = {
        status: 'halted',
        winner: null,
        reason: `Arm ${body.data.arms[1]!.name} has fewer senders than its weight asks for, so no winner is declared.`,
      };
      await route.fulfill({ response: res, json: body });
    });
    await page.goto(`${w.base}/console/experiments/${id}`);
    await page.locator('body[data-ready="experiments"]').waitFor();
    expect(await page.locator('#srm-warning').textContent()).toBe(
      'Sample-ratio mismatch: the split of senders and exposures is not the one the weights ask for (p = 0.00042). No winner is declared until it is; check who is in the campaign and which mailboxes failed to install.',
    );
    expect(await page.locator('#srm-warning').getAttribute('role')).toBe('alert');
    expect(await page.locator('#decision').textContent()).toBe('halted Arm Banner B has fewer senders than its weight asks for, so no winner is declared.');
    await w.screenshot(page, 'experiments-srm');
    await context.close();
  });

  it('promotes an arm and stops the experiment from the page, as the signed-in person; other workspaces see none of it', async () => {
    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.goto(`${w.base}/console/experiments/${id}`);
    await page.locator('body[data-ready="experiments"]').waitFor();
    const before = await get(id);
    const variant = before.arms[1]!;

    // Without the session's CSRF token, an action is refused and nothing moves.
    const forged = await context.request.post(`${w.base}/v1/experiments/${id}/stop`);
    expect(forged.status()).toBe(403);
    expect((await get(id)).status).toBe('running');

    // Stop: the campaign shows its own banner again.
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(async () => (await get(id)).status).toBe('stopped');
    await expect.poll(() => page.locator('#facts').textContent()).toContain('stopped');
    expect(await page.getByRole('button', { name: 'Start' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(0);

    // A stopped experiment's arm may still be promoted: the campaign continues with its banner.
    await page.getByRole('button', { name: `Promote ${variant.name}` }).click();
    await expect.poll(async () => (await get(id)).promoted_arm_id).toBe(variant.id);
    const campaigns = await w.acmeApi.request<{ data: { id: string; content: unknown }[] }>('GET', '/v1/marketing_campaigns?per_page=100');
    expect(campaigns.body.data.find((c) => c.id === w.acme.campaignId)?.content).toEqual(variantBanner());
    await expect.poll(() => page.locator('#action-status').textContent()).toContain(`Promoted ${variant.name}`);
    // One arm is promoted, once: no Promote button is left, and the facts name it.
    await expect.poll(() => page.getByRole('button', { name: /^Promote / }).count()).toBe(0);
    expect(await page.locator('#facts').textContent()).toContain(`Promoted${variant.name}`);

    const audit = (await w.acmeApi.request<{ data: { action: string; actor: { kind: string; name: string } }[] }>('GET', '/v1/audit_entries?per_page=20')).body
      .data;
    const mine = audit.filter((a) => a.action.startsWith('experiment.')).map((a) => [a.action, a.actor.kind, a.actor.name]);
    expect(mine).toEqual([
      ['experiment.promote', 'console', 'test'],
      ['experiment.stop', 'console', 'test'],
      ['experiment.start', 'console', 'test'],
      ['experiment.create', 'console', 'test'],
    ]);
    await context.close();

    // Globex: the experiment is not found, by its key or in its console.
    expect((await w.globexApi.request('GET', `/v1/experiments/${id}`)).status).toBe(404);
    const globex = await w.signIn(w.globex.workspaceId);
    await globex.page.goto(`${w.base}/console/experiments/${id}`);
    await globex.page.locator('#content .notice-error').waitFor();
    expect(await globex.page.locator('#content').textContent()).toBe('No such experiment in this workspace.');
    await globex.context.close();
  });
});
