/** Long-running commands: serve (API + worker), api, worker; and migrate. */
import type { Command } from 'commander';
import type { Logger } from 'pino';
import type { App, startApp } from '../../app.ts';
import type { Config } from '../../config.ts';
import { out } from '../../output.ts';

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
      const [{ withSandbox }, { sandboxConfig }] = await Promise.all([import('../../sandbox/demo.ts'), import('../../sandbox/mode.ts')]);
      // The sandbox (emulated tenants and the "Acme" workspace) runs beside the app unless SANDBOX=0;
      // in sandbox mode the server also delivers webhooks to loopback receivers.
      const config = sandboxConfig(base);
      if (config !== base) logger.info('sandbox mode: webhook endpoints may use http on loopback (ALLOW_INSECURE_WEBHOOKS=0 turns this off)');
      await runUntilSignal(async () => withSandbox(await startApp(config, logger, { api: true, worker: true })));
    });

  program
    .command('api')
    .description('Run only the HTTP API.')
    .action(async () => {
      const { config, logger, startApp } = await boot();
      await runUntilSignal(() => startApp(config, logger, { api: true }));
    });

  program
    .command('worker')
    .description('Run only the job worker (several may run against one database).')
    .action(async () => {
      const { config, logger, startApp } = await boot();
      await runUntilSignal(() => startApp(config, logger, { worker: true }));
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
