/**
 * Process lifecycle: open the database (embedded or DATABASE_URL), migrate, build the shared
 * context, and start the HTTP server and/or the worker. `stop()` shuts down in reverse order:
 * stop accepting requests, let running jobs finish (or release them after the grace period),
 * close the pool, stop embedded Postgres.
 */
import type { Runner } from 'graphile-worker';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { listenError, probeAddress } from './listenAddress.ts';
import type { AppContext } from './context.ts';
import { openContext } from './db/openContext.ts';
import { anyStoredCredential } from './integrations/queries.ts';
import type { Database } from './db/database.ts';
import { buildServer, type ServerRoutes } from './api/server.ts';
import { openNetworks } from './analytics/networks.ts';
import { startWorker, type WorkerOptions } from './worker/runner.ts';
import { serveWorkerMetrics, type MetricsServer } from './worker/metricsServer.ts';

export interface App {
  ctx: AppContext;
  db: Database;
  server?: FastifyInstance;
  runner?: Runner;
  /** The base URL the HTTP server listens on, when it runs. */
  url?: string;
  /** A lone worker's GET /metrics URL, when WORKER_METRICS_PORT is set. */
  metricsUrl?: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  api?: boolean;
  worker?: boolean | WorkerOptions;
  /** Run migrations first (default true). */
  migrate?: boolean;
  /** Routes added to the HTTP server (the sandbox's demo pages: `serve` passes them in sandbox mode only). */
  routes?: readonly ServerRoutes[];
}

/** Listens on HOST:PORT; an address that is taken or not allowed is a configuration error (exit 2). */
async function listen(server: FastifyInstance, config: Config): Promise<string> {
  try {
    return await server.listen({ host: config.HOST, port: config.PORT });
  } catch (err) {
    throw listenError(err, config.HOST, config.PORT, 'PORT');
  }
}

/** The ports this process will listen on, probed before the database is opened (or, embedded, built). */
async function probePorts(config: Config, opts: StartOptions): Promise<void> {
  if (opts.api) await probeAddress(config.HOST, config.PORT, 'PORT');
  else if (opts.worker && config.WORKER_METRICS_PORT !== undefined) await probeAddress(config.HOST, config.WORKER_METRICS_PORT, 'WORKER_METRICS_PORT');
}

export async function startApp(config: Config, logger: Logger, opts: StartOptions = {}): Promise<App> {
  const role = opts.api ? 'server' : opts.worker ? 'worker' : 'cli';
  await probePorts(config, opts);
  const { ctx, db, close } = await openContext(config, logger, {
    ...(opts.migrate !== undefined ? { migrate: opts.migrate } : {}),
    role,
    storedCredential: anyStoredCredential,
  });
  let server: FastifyInstance | undefined;
  let runner: Runner | undefined;
  let url: string | undefined;
  let metrics: MetricsServer | undefined;
  /** Until the runner has stopped (asked to, or on its own after an error). */
  let workerRunning = false;
  try {
    if (opts.worker) {
      runner = await startWorker(ctx, typeof opts.worker === 'object' ? opts.worker : {});
      workerRunning = true;
      runner.promise.then(
        () => (workerRunning = false),
        () => (workerRunning = false),
      );
    }
    if (opts.worker && !opts.api && config.WORKER_METRICS_PORT !== undefined)
      metrics = await serveWorkerMetrics(ctx, config.WORKER_METRICS_PORT, () => workerRunning);
    if (opts.api) {
      server = await buildServer(ctx, { routes: opts.routes ?? [] });
      // The IP-to-ASN data set that classifies clicks and views, loaded before the first request rather than on it.
      openNetworks();
      url = await listen(server, config);
      logger.info({ url }, 'API listening');
    }
  } catch (err) {
    await metrics?.close().catch(() => {});
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
    ...(metrics ? { metricsUrl: metrics.url } : {}),
    stop() {
      stopping ??= (async () => {
        await metrics?.close();
        await server?.close();
        // A runner that stopped on its own (an error) is not stopped again: that would reject.
        if (workerRunning) await runner?.stop();
        await close();
      })();
      return stopping;
    },
  };
}
