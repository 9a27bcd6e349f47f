/**
 * Fans the queued events of one workspace out to webhook deliveries (src/events/deliveries.ts). Enqueued
 * by the `events_webhook_dispatch` trigger with job key `dispatch_webhooks:<workspace id>`, so a burst
 * of events makes one job, not one per event.
 */
import { z } from 'zod';
import { defineTask } from './define.ts';
import { DISPATCH_TASK, dispatchWorkspace } from '../events/deliveries.ts';

export const dispatchWebhooks = defineTask({
  name: DISPATCH_TASK,
  payload: z.object({ workspaceId: z.uuid() }).loose(),
  async run({ workspaceId }, { app, logger }) {
    const r = await dispatchWorkspace(app.pool, workspaceId);
    logger.debug({ workspaceId, events: r.events, deliveries: r.deliveries }, 'webhook events dispatched');
  },
});
