/**
 * `sigsync billing connect|sync`: the workspace's payment-provider account (Stripe). The spec has no
 * endpoint for it, so admins connect it here. `connect` checks the key and the customer with one
 * read of the subscriptions, stores the key encrypted, and mirrors plan and invoices at once.
 */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../errors.ts';
import { out } from '../../output.ts';
import { requireUuid, requireWorkspace, withContext } from './admin.ts';

async function readCredentials(file: string): Promise<{ secret_key: string }> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await fs.readFile(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`--credentials-file: cannot read ${file} as JSON: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const key = (parsed as { secret_key?: unknown } | null)?.secret_key;
  if (typeof key !== 'string' || !/^(sk|rk)_\w+$/.test(key))
    throw new UsageError('--credentials-file: expected {"secret_key": "sk_..."} (a secret or restricted key)');
  return { secret_key: key };
}

export function billingCommands(program: Command): void {
  const billing = program.command('billing').description("The workspace's payment-provider account: plan, seats and invoices.");

  billing
    .command('connect')
    .description('Check a Stripe key and customer, store the key encrypted, and sync plan and invoices.')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--customer <id>', 'the Stripe customer id (cus_...)')
    .requiredOption('--credentials-file <file>', 'JSON {"secret_key": "sk_..."}')
    .option('--base-url <url>', 'another API address (an emulated Stripe)')
    .action(async (opts: { workspace: string; customer: string; credentialsFile: string; baseUrl?: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const creds = await readCredentials(opts.credentialsFile);
      const [{ connectBilling }, { readSubscription, stripeClient }, { syncBilling }] = await Promise.all([
        import('../../billing/billing.ts'),
        import('../../billing/provider.ts'),
        import('../../billing/sync.ts'),
      ]);
      await withContext(async (ctx) => {
        await requireWorkspace(ctx, workspaceId);
        try {
          await readSubscription(stripeClient(creds, opts.baseUrl), opts.customer);
        } catch (e) {
          throw new UsageError(`the payment provider refused these credentials or this customer: ${(e as Error).message}`);
        }
        await connectBilling(ctx.pool, ctx.secrets, workspaceId, { secretKey: creds.secret_key, customerId: opts.customer, baseUrl: opts.baseUrl });
        const synced = await syncBilling(ctx, workspaceId, ctx.logger);
        out(`billing connected for workspace ${workspaceId}: ${synced?.invoices ?? 0} invoices mirrored`);
      });
    });

  billing
    .command('sync')
    .description('Mirror the subscription (plan, seats) and invoices now.')
    .requiredOption('--workspace <id>', 'workspace id')
    .action(async (opts: { workspace: string }) => {
      const workspaceId = requireUuid(opts.workspace, '--workspace');
      const { syncBilling } = await import('../../billing/sync.ts');
      await withContext(async (ctx) => {
        const synced = await syncBilling(ctx, workspaceId, ctx.logger);
        if (!synced) throw new UsageError(`--workspace: workspace ${workspaceId} has no billing account (sigsync billing connect)`);
        out(`${synced.invoices} invoices, ${synced.written} written`);
      });
    });
}
