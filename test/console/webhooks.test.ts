/**
 * The console's webhooks page in headless Chromium: an endpoint on a loopback receiver gets the
 * teammate.created of a newcomer synced in; the page shows the delivery with the receiver's status,
 * and Redeliver sends it again with the same webhook-id.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createEndpoint } from '../../src/webhooks/endpoints.ts';
import { dispatchWorkspace } from '../../src/webhooks/deliveries.ts';
import { waitForRuns } from '../../src/sandbox/flow.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { waitFor } from '../helpers/cli.ts';
import { useConsoleWorld } from './support.ts';

describe('console: webhooks', () => {
  const w = useConsoleWorld();
  let receiver: Receiver | undefined;
  afterAll(async () => receiver?.close());

  it('shows deliveries with the response status, and redelivers with the same webhook-id', async () => {
    receiver = await startReceiver();
    await createEndpoint(w.t.ctx, { workspaceId: w.acme.workspaceId, url: `${receiver.url}/hooks`, eventTypes: ['teammate.created'] });
    w.emu.changeDirectory({ action: 'add', email: 'nora.quinn@acme.test', name: 'Nora Quinn', title: 'Analyst' });
    await waitForRuns(w.t.ctx.pool, await w.acmeApi.sync());
    await dispatchWorkspace(w.t.ctx.pool, w.acme.workspaceId);
    await waitFor(async () => receiver!.received.length >= 1);

    const { context, page } = await w.signIn(w.acme.workspaceId);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.locator('body[data-ready="webhooks"]').waitFor();
    const row = page.locator('tr[data-status="succeeded"]').first();
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.locator('td').nth(1).textContent()).toBe('teammate.created');
    expect(await row.locator('td').nth(4).textContent()).toBe('200');
    await w.screenshot(page, 'webhooks');

    const first = receiver.received[0]!.headers['webhook-id'];
    const id = (await row.getAttribute('data-delivery-id'))!;
    await row.getByRole('button', { name: /Redeliver/ }).click();
    await waitFor(async () => receiver!.received.length >= 2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(first);
    await context.close();

    // Another workspace's session cannot redeliver it.
    const other = await w.signIn(w.globex.workspaceId);
    const csrf = ((await (await other.context.request.get(`${w.base}/console/api/session`)).json()) as { data: { csrf_token: string } }).data.csrf_token;
    expect(
      (await other.context.request.post(`${w.base}/console/api/webhooks/deliveries/${id}/redeliver`, { headers: { 'x-csrf-token': csrf } })).status(),
    ).toBe(404);
    expect(((await (await other.context.request.get(`${w.base}/console/api/webhooks`)).json()) as { data: unknown[] }).data).toEqual([]);
    await other.context.close();
  });
});
