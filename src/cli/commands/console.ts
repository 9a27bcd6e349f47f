/**
 * `sigsync console link --workspace W`: a one-time sign-in link to the console (15 minutes; it opens
 * one session of 12 hours in the browser that follows it). See src/console/sessions.ts.
 */
import os from 'node:os';
import type { Command } from 'commander';
import { out } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { requireUuid, withContext } from './admin.ts';

export function consoleCommands(program: Command): void {
  const console_ = program.command('console').description('The console in the browser: integrations, mailboxes, analytics.');
  console_
    .command('link')
    .description('Print a one-time sign-in link to the console for a workspace (valid 15 minutes, opens one session).')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (opts: { workspace: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const { createSignInLink } = await import('../../console/sessions.ts');
      await withContext(async (ctx) => {
        if (!(await ctx.pool.query('select 1 from workspaces where id = $1', [workspaceId])).rowCount) throw new UsageError(`--workspace: no workspace ${workspaceId}`);
        const link = await createSignInLink(ctx.pool, workspaceId, `cli:${os.userInfo().username}`);
        out(`${ctx.config.PUBLIC_BASE_URL}/console/sign-in?token=${link.token}`);
        out(`Open it within 15 minutes (until ${link.expiresAt.toISOString()}); it works once.`);
      });
    });
}
