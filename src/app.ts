/**
 * Process lifecycle: open the database (embedded or DATABASE_URL), migrate, build the shared
 * context, and start the HTTP server and/or the worker. `stop()` shuts down in reverse order:
 * stop accepting requests, let running jobs finish (or release them after the grace period),
 * close the pool, stop embedded Postgres.
 */
import { makeWorkerUtils, type Runner } from 'graphile-worker';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ConfigError, type Config } from './config.ts';
import type { AppContext } from './context.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { loadSecrets } from './crypto/secrets.ts';
import { createMetrics } from './metrics.ts';
import { buildServer } from './api/server.ts';
import { startWorker, type WorkerOptions } from './worker/runner.ts';
import { graphileLogger } from './worker/logger.ts';

export interface App {
  ctx: AppContext;
  db: Database;
  server?: FastifyInstance;
  runner?: Runner;
  /** The base URL the HTTP server listens on, when it runs. */
  url?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  api?: boolean;
  worker?: boolean | WorkerOptions;
  /** Run migrations first (default true). */
  migrate?: boolean;
}

/** Opens the database and builds the context, without starting the server or the worker. */
export async function openContext(config: Config, logger: Logger, opts: { migrate?: boolean } = {}): Promise<{ ctx: AppContext; db: Database; close(): Promise<void> }> {
  const db = await openDatabase(config, logger);
  try {
    if (opts.migrate !== false) await migrate(db.url, logger);
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

/** Listens on HOST:PORT; an address that is taken or not allowed is a configuration error (exit 2). */
async function listen(server: FastifyInstance, config: Config): Promise<string> {
  try {
    return await server.listen({ host: config.HOST, port: config.PORT });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const at = `${config.HOST}:${config.PORT}`;
    if (code === 'EADDRINUSE') throw new ConfigError('PORT', `a port nothing else listens on (${at} is in use; 0 picks a free one)`);
    if (code === 'EACCES') throw new ConfigError('PORT', `a port this user may listen on (${at} is refused; ports below 1024 need privileges)`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new ConfigError('HOST', `an address of this machine (${config.HOST} is not)`);
    throw err;
  }
}

export async function startApp(config: Config, logger: Logger, opts: StartOptions = {}): Promise<App> {
  const { ctx, db, close } = await openContext(config, logger, opts);
  let server: FastifyInstance | undefined;
  let runner: Runner | undefined;
  let url: string | undefined;
  try {
    if (opts.worker) runner = await startWorker(ctx, typeof opts.worker === 'object' ? opts.worker : {});
    if (opts.api) {
      server = await buildServer(ctx);
      url = await listen(server, config);
      logger.info({ url }, 'API listening');
    }
  } catch (err) {
    await server?.close().catch(() => {});
    await runner?.stop().catch(() => {});
    await close();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    ctx,
    db,
    ...(server ? { server } : {}),
    ...(runner ? { runner } : {}),
    ...(url ? { url } : {}),
    stop() {
      stopping ??= (async () => {
        await server?.close();
        await runner?.stop();
        await close();
      })();
      return stopping;
    },
  };
}
