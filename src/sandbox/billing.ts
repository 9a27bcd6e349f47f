/**
 * The sandbox workspace's payment-provider account: connected to the emulated Stripe (a monthly
 * subscription with a seat per sandbox person, two invoices), pointed at its new address on every
 * start, and synced once, so GET /v1/financial_documents and GET /v1/workspace show its data. The
 * directory syncs of the demo then run the seat sync against it.
 */
import type { Logger } from 'pino';
import { syncBilling } from '../billing/sync.ts';
import type { AppContext } from '../context.ts';
import { connectBilling } from '../billing/billing.ts';
import type { SandboxTenants } from './tenants.ts';

export async function connectSandboxBilling(ctx: AppContext, log: Logger, workspaceId: string, stripe: SandboxTenants['stripe']): Promise<void> {
  await connectBilling(ctx.pool, ctx.secrets, workspaceId, { secretKey: stripe.account.secretKey, customerId: stripe.account.customerId, baseUrl: stripe.url });
  const synced = await syncBilling(ctx, workspaceId, log);
  log.info(
    `connected the emulated payment provider: a ${stripe.account.tier} subscription of ${stripe.account.quantity} seats and ${synced?.invoices ?? 0} invoices`,
  );
}
