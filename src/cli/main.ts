/**
 * `sigsync`: the command-line entry point. Each command has --help; an unknown command or flag prints
 * usage and exits 2; a bad environment variable prints one line and exits 2.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../configError.ts';
import { err } from '../output.ts';
import { UsageError } from './errors.ts';
import { serverCommands } from './commands/server.ts';
import { adminCommands } from './commands/admin.ts';
import { privacyCommands } from './commands/privacy.ts';
import { integrationCommands } from './commands/integration.ts';
import { syncCommands } from './commands/sync.ts';
import { installCommands } from './commands/install.ts';
import { webhookCommands } from './commands/webhook.ts';
import { renderCommands } from './commands/render.ts';
import { sandboxCommands } from './commands/sandbox.ts';
import { billingCommands } from './commands/billing.ts';
import { consoleCommands } from './commands/console.ts';
import { addinCommands } from './commands/addin.ts';
import { experimentCommands } from './commands/experiment.ts';

export function buildProgram(): Command {
  const program = new Command('sigsync')
    .description('Sync worker for email signatures: directory sync, rendering and mailbox installs.')
    .showHelpAfterError('(run sigsync --help for usage)')
    .exitOverride();
  serverCommands(program);
  adminCommands(program);
  privacyCommands(program);
  integrationCommands(program);
  syncCommands(program);
  installCommands(program);
  webhookCommands(program);
  renderCommands(program);
  sandboxCommands(program);
  billingCommands(program);
  consoleCommands(program);
  addinCommands(program);
  experimentCommands(program);
  const pathOf = (c: Command): string => (c.parent ? `${pathOf(c.parent)} ${c.name()}` : c.name());
  program.commands.forEach(function override(c: Command) {
    c.exitOverride();
    c.showHelpAfterError(`(run ${pathOf(c)} --help for usage)`);
    c.commands.forEach(override);
  });
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return Number(process.exitCode ?? 0);
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version') return 0;
      return 2;
    }
    if (e instanceof ConfigError || e instanceof UsageError) {
      err(e.message);
      return 2;
    }
    err(`sigsync: ${(e as Error).message}`);
    return 1;
  }
}

const args = process.argv.slice(2);
process.exit(await main(args.length ? args : ['--help']));
