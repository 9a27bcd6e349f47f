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
import { checkKeyFingerprint, resolvePublicBaseUrl, type ProcessRole } from './db/deployment.ts';
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

/**
 * Opens the database and builds the context, without starting the server or the worker. The key is
 * checked before anything is opened or written (with DATABASE_URL it is required), and against the
 * database's fingerprint once migrated; `role` decides who records the public base URL
 * (src/db/deployment.ts), and the context's config carries the deployment's one.
 */
export async function openContext(
  config: Config,
  logger: Logger,
  opts: { migrate?: boolean; role?: ProcessRole } = {},
): Promise<{ ctx: AppContext; db: Database; close(): Promise<void> }> {
  for (const warning of config.deprecations ?? []) logger.warn(warning);
  const keyOptions = { encryptionKey: config.ENCRYPTION_KEY, databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, logger };
  // With DATABASE_URL the key is required: refused before anything is opened. Embedded, a key is
  // generated under DATA_DIR, only once the cluster there has started.
  const given = config.DATABASE_URL ? loadSecrets(keyOptions) : undefined;
  const db = await openDatabase(config, logger);
  try {
    if (opts.migrate !== false) await migrate(db.migrationUrl, logger);
    const secrets = given ?? loadSecrets(keyOptions);
    await checkKeyFingerprint(db.pool, secrets, logger);
    const publicBaseUrl = await resolvePublicBaseUrl(db.pool, {
      role: opts.role ?? 'cli',
      configured: config.PUBLIC_BASE_URL,
      explicit: config.publicBaseUrlSet ?? false,
      logger,
    });
    const jobs = await makeWorkerUtils({ pgPool: db.pool, logger: graphileLogger(logger) });
    const ctx: AppContext = { config: { ...config, PUBLIC_BASE_URL: publicBaseUrl }, pool: db.pool, logger, secrets, metrics: createMetrics(), jobs };
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
