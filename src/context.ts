/**
 * What every part of a running process shares: configuration, the database pool, the logger,
 * the secrets box, metrics, and a handle to enqueue jobs. Built once per process by openContext
 * (src/db/openContext.ts): src/app.ts for the server and the worker, the CLI for one-shot commands.
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
  /** graphile-worker's utilities (the worker's liveness uses them). Jobs are added with `enqueue` (src/jobs/catalogue.ts). */
  jobs: WorkerUtils;
}
