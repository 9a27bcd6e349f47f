/** Prometheus metrics (prom-client): process metrics plus jobs by task and outcome. */
import { Registry, collectDefaultMetrics, Counter, Histogram } from 'prom-client';

export interface Metrics {
  registry: Registry;
  jobs: Counter<'task' | 'outcome'>;
  jobDuration: Histogram<'task'>;
  providerRequests: Counter<'provider' | 'outcome'>;
  /**
   * Webhook delivery attempts by outcome: succeeded, retrying (failed, another attempt scheduled),
   * failed (no attempt left, or a permanent failure), endpoint_disabled. The `deliver_webhook` job
   * itself succeeds whatever the receiver answered, so `sigsync_jobs_total` does not tell these apart.
   */
  webhookDeliveries: Counter<'outcome'>;
  /** Raw clicks and views the database refused for their data and the recorder dropped (src/analytics/batch.ts). */
  analyticsRowsDropped: Counter<'what'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    jobs: new Counter({
      name: 'sigsync_jobs_total',
      help: 'Jobs run by the worker, by task and outcome (succeeded, failed, invalid_payload).',
      labelNames: ['task', 'outcome'],
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'sigsync_job_duration_seconds',
      help: 'Job run time by task.',
      labelNames: ['task'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers: [registry],
    }),
    providerRequests: new Counter({
      name: 'sigsync_provider_requests_total',
      help: 'Provider API calls by provider and outcome.',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'sigsync_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (succeeded, retrying, failed, endpoint_disabled).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    analyticsRowsDropped: new Counter({
      name: 'sigsync_analytics_rows_dropped_total',
      help: 'Raw clicks and views dropped because the database refused their data (each logged with its id and the reason), by what.',
      labelNames: ['what'],
      registers: [registry],
    }),
  };
}
