/**
 * The billing sync and the seat sync.
 *
 * - syncBilling: reads the customer's subscription (plan, seat quantity) and every invoice, and
 *   mirrors them (billing_accounts, financial_documents). Each invoice's PDF (`file`) and, once paid,
 *   its hosted receipt page (`receipt`, also `payment_receipt_url`) are described with one HEAD
 *   request each (content type, length, file name from Content-Disposition).
 * - syncSeats: after a directory run that succeeded (queued in the run's transaction, one job per
 *   workspace at a time), the subscription's quantity follows the active teammates: one update per
 *   run, sent with the Idempotency-Key `sigsync-seats-<run id>` so a retried job never updates twice.
 *   A decrease waits until every directory integration of the workspace has finished its last run
 *   successfully; increases apply at once. Every decision is recorded in seat_syncs.
 *
 * Both run as jobs of their own: a provider failure fails the job (retried by graphile-worker) and
 * never the directory sync that asked for it.
 */
import type { Logger } from 'pino';
import type { AppContext } from '../context.ts';
import { closeSeatSync, type FileRef, loadBillingAccount, openSeatSync, recordBillingError, saveSubscription, upsertFinancialDocuments } from './billing.ts';
import { listInvoices, readSubscription, stripeClient, updateQuantity } from './provider.ts';
import { activeTeammateCount } from '../teammates/queries.ts';
import { directoriesSettled } from '../integrations/queries.ts';

const HEAD_TIMEOUT_MS = 10_000;

async function describeFile(url: string | null, fallbackName: string): Promise<FileRef | null> {
  if (!url) return null;
  try {
    const res = await fetch(url, { method: 'HEAD', redirect: 'follow', signal: AbortSignal.timeout(HEAD_TIMEOUT_MS) });
    const length = Number(res.headers.get('content-length'));
    const disposition = /filename="?([^";]+)"?/i.exec(res.headers.get('content-disposition') ?? '')?.[1];
    return {
      url,
      filename: disposition ?? fallbackName,
      content_type: res.headers.get('content-type')?.split(';')[0]?.trim() || 'application/octet-stream',
      byte_size: res.ok && Number.isFinite(length) && length > 0 ? length : null,
    };
  } catch {
    return { url, filename: fallbackName, content_type: 'application/octet-stream', byte_size: null };
  }
}

export async function syncBilling(app: AppContext, workspaceId: string, logger: Logger): Promise<{ invoices: number; written: number } | null> {
  const account = await loadBillingAccount(app.pool, app.secrets, workspaceId);
  if (!account) return null;
  const stripe = stripeClient(account.credentials, account.baseUrl);
  try {
    const [sub, invoices] = await Promise.all([readSubscription(stripe, account.customerId), listInvoices(stripe, account.customerId)]);
    const docs = await Promise.all(
      invoices.map(async (inv) => {
        const name = inv.number ?? inv.providerId;
        return {
          ...inv,
          file: await describeFile(inv.pdfUrl, `${name}.pdf`),
          receipt: inv.status === 'paid' ? await describeFile(inv.hostedUrl, `${name}-receipt.html`) : null,
        };
      }),
    );
    await saveSubscription(app.pool, workspaceId, sub);
    const written = await upsertFinancialDocuments(app.pool, workspaceId, docs);
    logger.info({ workspaceId, invoices: invoices.length, written, seats: sub?.quantity ?? null }, 'billing synced');
    return { invoices: invoices.length, written };
  } catch (err) {
    await recordBillingError(app.pool, workspaceId, (err as Error).message);
    throw err;
  }
}

export type SeatOutcome = { status: 'applied' | 'unchanged' | 'skipped'; previous: number | null; desired: number; reason: string | null };

export async function syncSeats(app: AppContext, workspaceId: string, runId: string, logger: Logger): Promise<SeatOutcome | null> {
  const account = await loadBillingAccount(app.pool, app.secrets, workspaceId);
  if (!account) return null;
  const desired = await activeTeammateCount(app.pool, workspaceId);
  const record = await openSeatSync(app.pool, workspaceId, runId, desired);
  if (record.status !== 'pending' && record.status !== 'failed') return null;
  const stripe = stripeClient(account.credentials, account.baseUrl);
  let outcome: SeatOutcome;
  try {
    const sub = await readSubscription(stripe, account.customerId);
    if (!sub) outcome = { status: 'skipped', previous: null, desired, reason: 'the customer has no subscription' };
    else if (sub.quantity === desired) outcome = { status: 'unchanged', previous: sub.quantity, desired, reason: null };
    else if (desired < sub.quantity && !(await directoriesSettled(app.pool, workspaceId))) {
      outcome = {
        status: 'skipped',
        previous: sub.quantity,
        desired,
        reason: 'a directory integration has not finished its last run; seats are not decreased from a partial listing',
      };
    } else {
      const updated = await updateQuantity(stripe, sub, desired, record.idempotencyKey);
      await saveSubscription(app.pool, workspaceId, updated);
      outcome = { status: 'applied', previous: sub.quantity, desired: updated.quantity, reason: null };
    }
  } catch (err) {
    await closeSeatSync(app.pool, record.id, { status: 'failed', previous: account.seatCount, reason: (err as Error).message });
    await recordBillingError(app.pool, workspaceId, (err as Error).message);
    throw err;
  }
  await closeSeatSync(app.pool, record.id, { status: outcome.status, previous: outcome.previous, reason: outcome.reason });
  logger.info({ workspaceId, runId, ...outcome }, 'seat sync');
  return outcome;
}
