/**
 * Fans the queued events of one workspace out to webhook deliveries (src/webhooks/deliveries.ts). Enqueued
 * by the `events_webhook_dispatch` trigger with job key `dispatch_webhooks:<workspace id>`, so a burst
 * of events makes one job, not one per event.
 */
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';
import { dispatchWorkspace } from '../webhooks/deliveries.ts';

export const dispatchWebhooks = defineTask(jobs.dispatchWebhooks, {
  async run({ workspaceId }, { app, logger }) {
    const r = await dispatchWorkspace(app.pool, workspaceId);
    logger.debug({ workspaceId, events: r.events, deliveries: r.deliveries }, 'webhook events dispatched');
  },
});
