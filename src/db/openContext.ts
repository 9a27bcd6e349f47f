/**
 * Opens the database and builds a process's context (src/context.ts): src/app.ts for the server and
 * the worker, the CLI for one-shot commands.
 */
import type { Logger } from 'pino';
import { makeWorkerUtils } from 'graphile-worker';
import type { AppContext } from '../context.ts';
import type { Config } from '../config.ts';
import { loadSecrets } from '../crypto/secrets.ts';
import { createMetrics } from '../metrics.ts';
import { openDatabase, type Database } from './database.ts';
import { migrate } from './migrate.ts';
import { checkKeyFingerprint, resolvePublicBaseUrl, type ProcessRole, type StoredCredential } from './deployment.ts';
import { graphileLogger } from '../graphileLogger.ts';

/** The pool of a worker-only process: one connection per job it runs at once, and one for LISTEN. */
export const workerPoolSize = (config: Pick<Config, 'WORKER_CONCURRENCY'>): number => config.WORKER_CONCURRENCY + 1;

/**
 * Opens the database and builds the context, without starting the server or the worker. The key is
 * checked before anything is opened or written (with DATABASE_URL it is required), and against the
 * database's fingerprint once migrated; `role` decides who records the public base URL
 * (src/db/deployment.ts), and the context's config carries the deployment's one. The caller passes
 * `storedCredential`, the integrations' read of one stored credential (anyStoredCredential in
 * src/integrations/queries.ts), which the key check needs on a database without a fingerprint.
 */
export async function openContext(
  config: Config,
  logger: Logger,
  opts: { migrate?: boolean; role?: ProcessRole; storedCredential: StoredCredential },
): Promise<{ ctx: AppContext; db: Database; close(): Promise<void> }> {
  for (const warning of config.deprecations ?? []) logger.warn(warning);
  const keyOptions = { encryptionKey: config.ENCRYPTION_KEY, databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, logger };
  // With DATABASE_URL the key is required: refused before anything is opened. Embedded, a key is
  // generated under DATA_DIR, only once the cluster there has started.
  const given = config.DATABASE_URL ? loadSecrets(keyOptions) : undefined;
  // A worker-only process holds at most a connection per job, and one more for graphile-worker's
  // LISTEN: on a database with few cores, fewer backends do the same work with less CPU
  // (docs/performance.md, sync-many). The server, which also answers requests, keeps 20.
  const db = await openDatabase(config, logger, opts.role === 'worker' ? workerPoolSize(config) : undefined);
  try {
    if (opts.migrate !== false) await migrate(db.migrationUrl, logger);
    const secrets = given ?? loadSecrets(keyOptions);
    await checkKeyFingerprint(db.pool, secrets, logger, opts.storedCredential);
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
