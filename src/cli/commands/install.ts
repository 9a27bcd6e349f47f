/**
 * Support tools:
 *   sigsync install list [--status S] [--integration ID] [--signature ID] [--address ADDR] [--workspace ID]
 *                                         every installation in a status (failed ones with their fix), paged
 *   sigsync install status --email ADDR   (and, for the Outlook add-in, each client platform's last fetch)
 *   sigsync install replay --email ADDR [--signature ID] [--dry-run] [--json]
 * The replay runs the same install as the worker, inline, and explains it: the teammate and the
 * signature chosen and why, the smart-field values used, a diff against the last installed HTML,
 * the provider's answer (secrets redacted) and the status transition. --dry-run calls no provider
 * and changes nothing.
 */
import type { Command } from 'commander';
import type { AppContext } from '../../context.ts';
import type { ReplayOptions } from './installReplay.ts';
import type { ListOptions } from './installList.ts';
import type { MailboxRef } from '../../install/replay.ts';
import { UsageError } from '../errors.ts';
import { oneLine, out, table } from '../../output.ts';
import { requireUuid, withContext } from './admin.ts';

async function findEmail(ctx: AppContext, address: string): Promise<MailboxRef> {
  const { findMailboxes } = await import('../../install/replay.ts');
  const rows = await findMailboxes(ctx.pool, address);
  if (!rows.length) throw new UsageError(`--email: no teammate has the address ${address}`);
  if (rows.length > 1) throw new UsageError(`--email: ${address} exists in ${rows.length} workspaces; this command needs it to be unique`);
  return rows[0]!;
}

/** The address's installations with their signature's name and provider, ordered by signature name, kind and provider. */
async function installationsOf(ctx: AppContext, email: MailboxRef) {
  const [{ installationsOfMailbox }, { signatureNames }, { integrationNames }] = await Promise.all([
    import('../../installations/queries.ts'),
    import('../../signatures/queries.ts'),
    import('../../integrations/queries.ts'),
  ]);
  const installs = await installationsOfMailbox(ctx.pool, email.workspace_id, email.id);
  const [signatures, integrations] = await Promise.all([
    signatureNames(ctx.pool, email.workspace_id, [...new Set(installs.map((i) => i.signature_id))]),
    integrationNames(ctx.pool, email.workspace_id, [...new Set(installs.map((i) => i.integration_id))]),
  ]);
  // Names sort as the database sorts them: each name ranks where it first comes in signatureNames' order.
  const rank = new Map<string, number>();
  for (const s of signatures) if (!rank.has(s.name)) rank.set(s.name, rank.size);
  const name = new Map(signatures.map((s) => [s.id, s.name]));
  const provider = new Map(integrations.map((i) => [i.id, i.kind]));
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return installs
    .map(({ signature_id, integration_id, ...i }) => ({ signature: name.get(signature_id)!, ...i, provider: provider.get(integration_id)! }))
    .sort((a, b) => rank.get(a.signature)! - rank.get(b.signature)! || cmp(a.kind, b.kind) || cmp(a.provider, b.provider));
}

export function installCommands(program: Command): void {
  const install = program.command('install').description('Inspect and replay mailbox installs.');

  install
    .command('list')
    .description("List a workspace's installations, newest first: status, error code, the provider's message and the fix.")
    .option('--status <status>', 'only this status: failed, access_lost, pending, installed, not_installed, not_activated or not_supported')
    .option('--integration <id>', 'only installs into this integration')
    .option('--signature <id>', 'only installs of this signature')
    .option('--address <address>', 'only this address (whole, any case)')
    .option('--workspace <id>', "the workspace (default: the deployment's only one)")
    .option('--page <n>', 'which page', '1')
    .option('--per-page <n>', 'rows a page, at most 1000', '100')
    .option('--json', 'print {data, pagination} instead of a table')
    .action(async (opts: ListOptions) => {
      const { listCommand, parseListOptions } = await import('./installList.ts');
      const parsed = parseListOptions(opts);
      await withContext(async (ctx) => listCommand(ctx, parsed, opts.json ?? false));
    });

  install
    .command('status')
    .description("Show every installation of an address: status, error code and the provider's message, since when.")
    .requiredOption('--email <address>', 'the mailbox address')
    .action(async (opts: { email: string }) => {
      await withContext(async (ctx) => {
        const email = await findEmail(ctx, opts.email);
        const rows = await installationsOf(ctx, email);
        out(oneLine(`${email.address} (${email.display_name || 'no name'}${email.deleted_at ? ', removed' : ''})`));
        table(rows, ['signature', 'kind', 'provider', 'status', 'error', 'failing_since', 'installed_at', 'attempts', 'hash', 'message']);
        // The Outlook add-in: which client platforms fetched, when, and whether they hold the current version.
        const { clientVersionsOf } = await import('../../addin/clients.ts');
        const clients = await clientVersionsOf(ctx, email.workspace_id, email);
        if (clients.length) {
          out('');
          out('Outlook add-in clients:');
          table(
            clients.map((c) => ({
              platform: c.platform,
              client_version: c.client_version,
              last_fetched_at: c.last_fetched_at,
              version: c.current ? 'current' : 'older',
            })),
            ['platform', 'client_version', 'last_fetched_at', 'version'],
          );
        }
      });
    });

  install
    .command('replay')
    .description('Install one mailbox now and explain every step (the same path the worker takes); exits 1 when an install fails.')
    .requiredOption('--email <address>', 'the mailbox address')
    .option('--signature <id>', 'install this signature instead of the highest-priority one')
    .option('--kind <kind>', 'which signature variant: primary (new mail), reply (replies and forwards) or internal (mail to colleagues)', 'primary')
    .option('--dry-run', 'render and decide, but call no provider and change nothing')
    .option('--json', 'print one JSON object instead of text')
    .action(async (opts: ReplayOptions) => {
      if (!['primary', 'reply', 'internal'].includes(opts.kind)) throw new UsageError('--kind: expected primary, reply or internal');
      const signatureId = opts.signature ? requireUuid(opts.signature, '--signature') : undefined;
      const { replay } = await import('./installReplay.ts');
      await withContext(async (ctx) => replay(ctx, await findEmail(ctx, opts.email), { ...opts, signature: signatureId }));
    });
}
