/**
 * The payment provider, through the official `stripe` SDK: the customer's subscription (plan and
 * seat quantity), its invoices, and the quantity update. `base_url` in the account's config points
 * the SDK's host, port and protocol options elsewhere (the sandbox's and the tests' emulated
 * Stripe); without it the SDK talks to api.stripe.com. The SDK's own retries are off: a failed
 * call fails the job, and graphile-worker retries it with backoff (the update keeps its
 * Idempotency-Key across attempts).
 *
 * Stripe API reference: https://docs.stripe.com/api/subscriptions/list,
 * https://docs.stripe.com/api/invoices/list, https://docs.stripe.com/api/subscriptions/update,
 * https://docs.stripe.com/api/idempotent_requests
 */
import Stripe from 'stripe';

export interface BillingCredentials {
  secret_key: string;
}

export interface Plan {
  tier: string;
  kind: 'free_trial' | 'paid' | 'free';
  status: string;
  billing_interval: string | null;
  cancel_at_period_end: boolean;
  started_at: Date | null;
  ends_at: Date | null;
}

export interface SubscriptionState {
  id: string;
  itemId: string;
  quantity: number;
  plan: Plan;
}

export const STATUSES = ['draft', 'open', 'paid', 'uncollectible', 'void'] as const;

export interface InvoiceDoc {
  providerId: string;
  number: string | null;
  totalCents: number;
  currency: string | null;
  status: (typeof STATUSES)[number];
  dueDate: Date | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  pdfUrl: string | null;
  hostedUrl: string | null;
  issuedAt: Date;
}

const at = (s: number | null | undefined) => (s ? new Date(s * 1000) : null);
const INTERVALS: Record<string, string> = { day: 'daily', week: 'weekly', month: 'monthly', year: 'yearly' };
/** Subscription statuses that hold the workspace's seats, best first. */
const LIVE = ['active', 'trialing', 'past_due', 'unpaid', 'paused', 'incomplete'];

export function stripeClient(creds: BillingCredentials, baseUrl?: string): Stripe {
  const url = baseUrl ? new URL(baseUrl) : undefined;
  return new Stripe(creds.secret_key, {
    maxNetworkRetries: 0,
    timeout: 20_000,
    telemetry: false,
    ...(url ? { host: url.hostname, port: url.port || (url.protocol === 'http:' ? 80 : 443), protocol: url.protocol === 'http:' ? 'http' : 'https' } : {}),
  });
}

export function planOf(sub: Stripe.Subscription): Plan {
  const item = sub.items.data[0];
  const price = item?.price;
  const periodEnd = (item as { current_period_end?: number } | undefined)?.current_period_end;
  return {
    tier: price?.lookup_key ?? price?.nickname ?? sub.metadata?.tier ?? 'standard',
    kind: sub.status === 'trialing' ? 'free_trial' : (price?.unit_amount ?? 1) === 0 ? 'free' : 'paid',
    status: sub.status,
    billing_interval: price?.recurring ? (INTERVALS[price.recurring.interval] ?? price.recurring.interval) : null,
    cancel_at_period_end: sub.cancel_at_period_end,
    started_at: at(sub.start_date),
    ends_at: at(sub.ended_at ?? sub.cancel_at ?? (sub.status === 'trialing' ? sub.trial_end : null) ?? periodEnd),
  };
}

/** The customer's subscription that holds the seats (the live one, else the latest), or null. */
export async function readSubscription(stripe: Stripe, customerId: string): Promise<SubscriptionState | null> {
  const { data } = await stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 20 });
  const rank = (s: Stripe.Subscription) => (LIVE.includes(s.status) ? LIVE.indexOf(s.status) : LIVE.length);
  const sub = [...data].sort((a, b) => rank(a) - rank(b) || b.created - a.created)[0];
  const item = sub?.items.data[0];
  if (!sub || !item) return null;
  return { id: sub.id, itemId: item.id, quantity: item.quantity ?? 0, plan: planOf(sub) };
}

/** Every invoice of the customer, following the list's pages. */
export async function listInvoices(stripe: Stripe, customerId: string): Promise<InvoiceDoc[]> {
  const out: InvoiceDoc[] = [];
  for await (const inv of stripe.invoices.list({ customer: customerId, limit: 100 })) {
    if (!inv.id || !inv.status || !(STATUSES as readonly string[]).includes(inv.status)) continue;
    out.push({
      providerId: inv.id,
      number: inv.number,
      totalCents: inv.total,
      currency: inv.currency ?? null,
      status: inv.status as InvoiceDoc['status'],
      dueDate: at(inv.due_date),
      periodStart: at(inv.period_start),
      periodEnd: at(inv.period_end),
      pdfUrl: inv.invoice_pdf ?? null,
      hostedUrl: inv.hosted_invoice_url ?? null,
      issuedAt: at(inv.created)!,
    });
  }
  return out;
}

/** Sets the subscription item's quantity; the key makes a retried call a no-op at the provider. */
export async function updateQuantity(stripe: Stripe, sub: SubscriptionState, quantity: number, idempotencyKey: string): Promise<SubscriptionState> {
  const updated = await stripe.subscriptions.update(
    sub.id,
    { items: [{ id: sub.itemId, quantity }], proration_behavior: 'create_prorations' },
    { idempotencyKey },
  );
  const item = updated.items.data.find((i) => i.id === sub.itemId) ?? updated.items.data[0];
  return { id: updated.id, itemId: item?.id ?? sub.itemId, quantity: item?.quantity ?? quantity, plan: planOf(updated) };
}
