/**
 * `sigsync console link --workspace W [--as ADDRESS]`: a one-time sign-in link to the console for the
 * person ADDRESS (15 minutes; it opens one session of 12 hours in the browser that follows it). The
 * audit trail names ADDRESS as the actor of everything done with that session. Without --as the link
 * is for whoever ran the command, `cli:USER`. See src/console/sessions.ts.
 */
import type { Command } from 'commander';
import { out } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { cliActor, requireUuid, requireWorkspace, withContext } from './admin.ts';

/** An email address as people write one: no spaces, no control or bidi characters, at most 254 characters. */
const ADDRESS = /^[^\s@\p{Cc}\p{Cf}]+@[^\s@\p{Cc}\p{Cf}]+\.[^\s@\p{Cc}\p{Cf}]+$/u;

export function consoleCommands(program: Command): void {
  const console_ = program.command('console').description('The console in the browser: integrations, mailboxes, analytics.');
  console_
    .command('link')
    .description('Print a one-time sign-in link to the console for a workspace (valid 15 minutes, opens one session).')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--as <address>', 'whom the link is for, named in the audit trail (default: cli:USER, the user running this command)')
    .action(async (opts: { workspace: string; as?: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      if (opts.as !== undefined && (opts.as.length > 254 || !ADDRESS.test(opts.as)))
        throw new UsageError(`--as: an email address such as alice@acme.example; got "${opts.as}"`);
      const { createSignInLink } = await import('../../console/sessions.ts');
      await withContext(async (ctx) => {
        await requireWorkspace(ctx, workspaceId);
        const by = cliActor().name;
        const subject = opts.as ?? by;
        const link = await createSignInLink(ctx.pool, workspaceId, by, undefined, subject);
        out(`${ctx.config.PUBLIC_BASE_URL}/console/sign-in?token=${link.token}`);
        out(`For ${subject}. Open it within 15 minutes (until ${link.expiresAt.toISOString()}); it works once.`);
      });
    });
}
