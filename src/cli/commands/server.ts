/** Long-running commands: serve (API + worker), api, worker; and migrate. */
import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { startApp, type App } from '../../app.ts';
import { openDatabase } from '../../db/database.ts';
import { migrate } from '../../db/migrate.ts';
import { out } from '../output.ts';
import { withSandbox } from '../../sandbox/demo.ts';

/** Grace period for a clean shutdown after SIGINT/SIGTERM. */
export const SHUTDOWN_GRACE_MS = 15_000;

/**
 * Starts the app and runs it until SIGINT or SIGTERM, then stops it within the grace period. A
 * signal that arrives while the app is still starting is honoured as soon as it has started; a
 * second signal exits at once.
 */
async function runUntilSignal(start: () => Promise<App>): Promise<void> {
  let received: NodeJS.Signals | undefined;
  let onSignal = (signal: NodeJS.Signals) => {
    if (received) process.exit(1);
    received = signal;
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS).unref();
  };
  const handler = (signal: NodeJS.Signals) => onSignal(signal);
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);

  const app = await start();
  await new Promise<void>((resolve) => {
    const shutDown = (signal: NodeJS.Signals) => {
      app.ctx.logger.info({ signal }, 'shutting down');
      setTimeout(() => {
        app.ctx.logger.error('shutdown took longer than the grace period; exiting');
        process.exit(1);
      }, SHUTDOWN_GRACE_MS).unref();
      app.stop().then(
        () => {
          app.ctx.logger.info('stopped');
          resolve();
        },
        (e: unknown) => {
          app.ctx.logger.error({ err: e }, 'error during shutdown');
          process.exitCode = 1;
          resolve();
        },
      );
    };
    onSignal = (signal) => {
      if (received) {
        app.ctx.logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      received = signal;
      shutDown(signal);
    };
    if (received) shutDown(received);
  });
}

export function serverCommands(program: Command): void {
  program
    .command('serve')
    .description('Run the API and the worker in one process (what npm start runs).')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.LOG_LEVEL);
      // The sandbox (emulated tenants and the "Acme" workspace) runs beside the app unless SANDBOX=0.
      await runUntilSignal(async () => withSandbox(await startApp(config, logger, { api: true, worker: true })));
    });

  program
    .command('api')
    .description('Run only the HTTP API.')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.LOG_LEVEL);
      await runUntilSignal(() => startApp(config, logger, { api: true }));
    });

  program
    .command('worker')
    .description('Run only the job worker (several may run against one database).')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.LOG_LEVEL);
      await runUntilSignal(() => startApp(config, logger, { worker: true }));
    });

  program
    .command('migrate')
    .description('Apply pending database migrations (a no-op when up to date).')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.LOG_LEVEL);
      const db = await openDatabase(config, logger, 2);
      try {
        const { applied } = await migrate(db.url, logger);
        out(applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'database is up to date');
      } finally {
        await db.close();
      }
    });
}
