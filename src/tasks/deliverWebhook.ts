/**
 * One attempt of one webhook delivery (src/webhooks/delivery.ts); on a retryable failure the task
 * re-adds its own job key with the next `run_at` of the retry schedule. `deliverWebhookTask(policy)`
 * builds the task with another schedule or timeout (tests pass a fast one to startWorker). Each
 * attempt's outcome is counted in `sigsync_webhook_deliveries_total{outcome}`.
 */
import { jobs } from '../jobs/catalogue.ts';
import { defineTask } from './define.ts';
import { DEFAULT_POLICY, deliverOnce, type DeliveryPolicy } from '../webhooks/delivery.ts';

export function deliverWebhookTask(policy: Partial<DeliveryPolicy> = {}) {
  const full: DeliveryPolicy = { ...DEFAULT_POLICY, ...policy };
  return defineTask(jobs.deliverWebhook, {
    async run({ deliveryId }, { app, logger }) {
      const outcome = await deliverOnce(app, deliveryId, logger, full);
      // missing and settled: no attempt was made.
      if (outcome !== 'missing' && outcome !== 'settled') app.metrics.webhookDeliveries.inc({ outcome });
    },
  });
}

export const deliverWebhook = deliverWebhookTask();
