/**
 * What every part of a running process shares: configuration, the database pool, the logger,
 * the secrets box, metrics, and a handle to enqueue jobs. Built once in src/app.ts.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import type { WorkerUtils } from 'graphile-worker';
import type { Config } from './config.ts';
import type { Secrets } from './crypto/secrets.ts';
import type { Metrics } from './metrics.ts';

export interface AppContext {
  config: Config;
  pool: pg.Pool;
  logger: Logger;
  secrets: Secrets;
  metrics: Metrics;
  /** Enqueue jobs from outside a task (API, CLI). Inside a task prefer `helpers.addJob`. */
  jobs: WorkerUtils;
}
