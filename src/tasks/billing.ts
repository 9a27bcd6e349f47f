/**
 * Billing jobs (src/billing/sync.ts): `sync_billing` mirrors the subscription and invoices of one
 * workspace; `sync_seats` moves the subscription's quantity after a directory run, then refreshes
 * the mirror. Both are queued with a per-workspace job key, so bursts coalesce.
 */
import { syncBilling, syncSeats } from '../billing/sync.ts';
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';

export const syncBillingTask = defineTask(jobs.syncBilling, {
  async run({ workspaceId }, { app, logger }) {
    await syncBilling(app, workspaceId, logger);
  },
});

export const syncSeatsTask = defineTask(jobs.syncSeats, {
  async run({ workspaceId, runId }, { app, logger }) {
    const outcome = await syncSeats(app, workspaceId, runId, logger);
    if (outcome?.status === 'applied') await syncBilling(app, workspaceId, logger);
  },
});
