/**
 * Billing jobs (src/billing/sync.ts): `sync_billing` mirrors the subscription and invoices of one
 * workspace; `sync_seats` moves the subscription's quantity after a directory run, then refreshes
 * the mirror. Both are queued with a per-workspace job key, so bursts coalesce.
 */
import { z } from 'zod';
import { syncBilling, syncSeats } from '../billing/sync.ts';
import { defineTask } from './define.ts';

export const syncBillingTask = defineTask({
  name: 'sync_billing',
  payload: z.object({ workspaceId: z.uuid() }),
  async run({ workspaceId }, { app, logger }) {
    await syncBilling(app, workspaceId, logger);
  },
});

export const syncSeatsTask = defineTask({
  name: 'sync_seats',
  payload: z.object({ workspaceId: z.uuid(), runId: z.uuid() }),
  async run({ workspaceId, runId }, { app, logger }) {
    const outcome = await syncSeats(app, workspaceId, runId, logger);
    if (outcome?.status === 'applied') await syncBilling(app, workspaceId, logger);
  },
});
