/** Long-running commands: serve (API + worker), api, worker; and migrate. */
import os from 'node:os';
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { App, startApp } from '../../app.ts';
import type { Config } from '../../config.ts';
import { out } from '../../output.ts';

/** Grace period for a clean shutdown after SIGINT/SIGTERM. */
export const SHUTDOWN_GRACE_MS = 15_000;

/**
 * A repeat of the signal within this window is the same Ctrl-C delivered twice, not a second one:
 * a terminal signals its whole foreground process group, so `npm start` and the launcher in
 * bin/sigsync.js (which forwards the signals it gets) may pass on the one this process also got.
 */
export const SIGNAL_REPEAT_MS = 1_000;

/**
 * Starts the app and runs it until SIGINT or SIGTERM, then stops it within the grace period and
 * exits 0, having logged one line ("shutting down", or during start-up "stopping once started"). A signal that arrives while the app is still
 * starting is honoured as soon as it has started (the start is not cut short: a first start
 * initialises the database); a second signal, a second or more after the first, exits at once
 * with 128 + the signal's number.
 */
async function runUntilSignal(logger: Logger, start: (stopping: () => boolean) => Promise<App>): Promise<void> {
  let received: { signal: NodeJS.Signals; at: number } | undefined;
  const started: { logger?: Logger } = {};
  let shutDown: ((signal: NodeJS.Signals, announce: boolean) => void) | undefined;
  const handler = (signal: NodeJS.Signals) => {
    if (received) {
      if (signal === received.signal && Date.now() - received.at < SIGNAL_REPEAT_MS) return;
      started.logger?.warn({ signal }, 'second signal: exiting now');
      process.exit(128 + (os.constants.signals[signal] ?? 0));
    }
    received = { signal, at: Date.now() };
    if (shutDown) return shutDown(signal, true);
    process.stderr.write(`${signal}: stopping once started (again to exit at once)\n`);
    // The rest of the start-up is not news any more: only errors are.
    logger.level = 'error';
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);

  const app = await start(() => received !== undefined);
  started.logger = app.ctx.logger;
  await new Promise<void>((resolve) => {
    shutDown = (signal: NodeJS.Signals, announce: boolean) => {
      if (announce) app.ctx.logger.info({ signal }, 'shutting down');
      else app.ctx.logger.debug({ signal }, 'shutting down');
      setTimeout(() => {
        app.ctx.logger.error('shutdown took longer than the grace period; exiting');
        process.exit(1);
      }, SHUTDOWN_GRACE_MS).unref();
      app.stop().then(
        () => {
          app.ctx.logger.debug('stopped');
          resolve();
        },
        (e: unknown) => {
          app.ctx.logger.error({ err: e }, 'error during shutdown');
          process.exitCode = 1;
          resolve();
        },
      );
    };
    if (received) shutDown(received.signal, false);
  });
}

/** The configuration and the logger of a long-running command, and the app's start function. */
async function boot(): Promise<{ config: Config; logger: Logger; startApp: typeof startApp }> {
  const [{ loadConfig }, { createLogger }, app] = await Promise.all([import('../../config.ts'), import('../../log.ts'), import('../../app.ts')]);
  const config = loadConfig();
  return { config, logger: createLogger(config.LOG_LEVEL), startApp: app.startApp };
}

export function serverCommands(program: Command): void {
  program
    .command('serve')
    .description('Run the API and the worker in one process (what npm start runs).')
    .action(async () => {
      const { config: base, logger, startApp } = await boot();
      const [{ withSandbox, sandboxServerRoutes }, { sandboxConfig }, { lockDataDir }] = await Promise.all([
        import('../../sandbox/demo.ts'),
        import('../../sandbox/mode.ts'),
        import('../../serverLock.ts'),
      ]);
      // One server per DATA_DIR (its sandbox and embedded database): taken before anything starts.
      const lock = lockDataDir(base.DATA_DIR);
      // The sandbox (emulated tenants and the "Acme" workspace) runs beside the app unless SANDBOX=0;
      // in sandbox mode the server also delivers webhooks to loopback receivers.
      const config = sandboxConfig(base);
      if (config !== base) logger.info('sandbox mode: webhook endpoints may use http on loopback (ALLOW_INSECURE_OUTBOUND_URLS=0 turns this off)');
      try {
        await runUntilSignal(logger, async (stopping) => {
          // The sandbox's demo pages (the Outlook compose window) exist in sandbox mode only.
          const app = await startApp(config, logger, { api: true, worker: true, routes: sandboxServerRoutes(config) });
          return stopping() ? app : withSandbox(app);
        });
      } finally {
        lock.release();
      }
    });

  program
    .command('api')
    .description('Run only the HTTP API.')
    .action(async () => {
      const { config, logger, startApp } = await boot();
      await runUntilSignal(logger, () => startApp(config, logger, { api: true }));
    });

  program
    .command('worker')
    .description('Run only the job worker (several may run against one database).')
    .action(async () => {
      const { config, logger, startApp } = await boot();
      await runUntilSignal(logger, () => startApp(config, logger, { worker: true }));
    });

  program
    .command('migrate')
    .description('Apply pending database migrations (a no-op when up to date).')
    .action(async () => {
      const [{ loadConfig }, { createLogger }, { openDatabase }, { migrate }] = await Promise.all([
        import('../../config.ts'),
        import('../../log.ts'),
        import('../../db/database.ts'),
        import('../../db/migrate.ts'),
      ]);
      const config = loadConfig();
      const logger = createLogger(config.LOG_LEVEL);
      const db = await openDatabase(config, logger, 2);
      try {
        const { applied } = await migrate(db.migrationUrl, logger);
        out(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
    });
}
