/**
 * What every part of a running process shares: configuration, the database pool, the logger,
 * the secrets box, metrics, and a handle to enqueue jobs. Built once per process by openContext:
 * src/app.ts for the server and the worker, the CLI for one-shot commands.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { makeWorkerUtils, type WorkerUtils } from 'graphile-worker';
import type { Config } from './config.ts';
import { loadSecrets, type Secrets } from './crypto/secrets.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { graphileLogger } from './graphileLogger.ts';

export interface AppContext {
  config: Config;
  pool: pg.Pool;
  logger: Logger;
  secrets: Secrets;
  metrics: Metrics;
  /** Enqueue jobs from outside a task (API, CLI). Inside a task prefer `helpers.addJob`. */
  jobs: WorkerUtils;
}

/** Opens the database and builds the context, without starting the server or the worker. */
export async function openContext(config: Config, logger: Logger, opts: { migrate?: boolean } = {}): Promise<{ ctx: AppContext; db: Database; close(): Promise<void> }> {
  const db = await openDatabase(config, logger);
  try {
    if (opts.migrate !== false) await migrate(db.migrationUrl, logger);
    const secrets = loadSecrets({ encryptionKey: config.ENCRYPTION_KEY, dataDir: config.DATA_DIR, logger });
    const jobs = await makeWorkerUtils({ pgPool: db.pool, logger: graphileLogger(logger) });
    const ctx: AppContext = { config, pool: db.pool, logger, secrets, metrics: createMetrics(), jobs };
    return {
      ctx,
      db,
      async close() {
        await jobs.release();
        await db.close();
      },
    };
  } catch (err) {
    await db.close();
    throw err;
  }
}
