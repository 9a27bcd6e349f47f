/**
 * An emulated Stripe account on loopback: the few API endpoints the billing sync calls, answering
 * in Stripe's shapes (list objects, subscription and invoice objects, `{error: {type, message}}`
 * with 401 for a wrong key, 404 for unknown ids).
 *
 *   GET  /v1/subscriptions?customer=&status=   the customer's subscriptions
 *   POST /v1/subscriptions/{id}                items[0][id], items[0][quantity]; Idempotency-Key
 *                                              replays the first answer for a key already used
 *   GET  /v1/invoices?customer=&limit=&starting_after=   newest first, paged
 *   GET|HEAD /files/{invoice id}.pdf, /receipts/{invoice id}   the invoice PDF and receipt page
 *
 * Point the `stripe` SDK at it with `base_url` = `url` (host, port and protocol options).
 * `updates` lists every quantity update that changed something, for tests and the sandbox state.
 */
import { defaultKnobs, parseBody, serve, type EmulatorServer, type Knobs, type Reply, type Route } from './http.ts';

export interface StripeInvoiceSeed {
  number: string;
  totalCents: number;
  status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void';
  /** Unix seconds. */
  periodStart: number;
  periodEnd: number;
  dueDate: number | null;
}

export interface StripeAccountSeed {
  secretKey: string;
  customerId: string;
  quantity: number;
  status: 'active' | 'trialing' | 'past_due' | 'canceled';
  interval: 'month' | 'year';
  tier: string;
  unitAmountCents: number;
  /** Unix seconds. */
  startDate: number;
  invoices: StripeInvoiceSeed[];
}

export interface StripeEmulator extends EmulatorServer {
  account: StripeAccountSeed;
  /** Quantity updates applied, oldest first (replays of an idempotency key are not listed). */
  updates: { idempotencyKey: string | null; from: number; to: number }[];
  subscriptionId: string;
}

const DAY = 86_400;

/** A subscription of `quantity` seats, billed monthly, with two invoices: last month's paid, this month's open. */
export function generateStripeAccount(quantity: number, now = Math.floor(Date.now() / 1000)): StripeAccountSeed {
  const month = 30 * DAY;
  const start = now - 45 * DAY;
  return {
    secretKey: 'sk_test_sandbox_00000000000000000000',
    customerId: 'cus_SANDBOX0001',
    quantity,
    status: 'active',
    interval: 'month',
    tier: 'business',
    unitAmountCents: 400,
    startDate: start,
    invoices: [
      { number: 'SIG-0001', totalCents: quantity * 400, status: 'paid', periodStart: start, periodEnd: start + month, dueDate: start + month + 14 * DAY },
      {
        number: 'SIG-0002',
        totalCents: quantity * 400,
        status: 'open',
        periodStart: start + month,
        periodEnd: start + 2 * month,
        dueDate: start + 2 * month + 14 * DAY,
      },
    ],
  };
}

const stripeError = (status: number, type: string, message: string, code?: string): Reply => ({
  status,
  body: { error: { type, message, ...(code ? { code } : {}) } },
});
const list = (url: string, data: unknown[], hasMore = false): Reply => ({ status: 200, body: { object: 'list', data, has_more: hasMore, url } });

const SUBSCRIPTION_ID = 'sub_SANDBOX0001';
const ITEM_ID = 'si_SANDBOX0001';
const invoiceId = (i: number) => `in_SANDBOX${String(i + 1).padStart(4, '0')}`;

interface State {
  account: StripeAccountSeed;
  updates: StripeEmulator['updates'];
  replays: Map<string, Reply>;
  base: string;
}

function subscriptionObject(account: StripeAccountSeed) {
  return {
    id: SUBSCRIPTION_ID,
    object: 'subscription',
    customer: account.customerId,
    status: account.status,
    cancel_at_period_end: false,
    cancel_at: null,
    canceled_at: null,
    ended_at: null,
    created: account.startDate,
    start_date: account.startDate,
    trial_end: null,
    metadata: {},
    items: {
      object: 'list',
      has_more: false,
      url: `/v1/subscription_items?subscription=${SUBSCRIPTION_ID}`,
      data: [
        {
          id: ITEM_ID,
          object: 'subscription_item',
          quantity: account.quantity,
          current_period_start: account.startDate,
          current_period_end: account.startDate + 60 * DAY,
          price: {
            id: 'price_SEAT',
            object: 'price',
            lookup_key: account.tier,
            nickname: null,
            unit_amount: account.unitAmountCents,
            currency: 'usd',
            recurring: { interval: account.interval, interval_count: 1 },
          },
        },
      ],
    },
  };
}

function invoiceObject(st: State, inv: StripeInvoiceSeed, i: number) {
  return {
    id: invoiceId(i),
    object: 'invoice',
    customer: st.account.customerId,
    number: inv.number,
    status: inv.status,
    total: inv.totalCents,
    currency: 'usd',
    created: inv.periodEnd,
    due_date: inv.dueDate,
    period_start: inv.periodStart,
    period_end: inv.periodEnd,
    invoice_pdf: `${st.base}/files/${invoiceId(i)}.pdf`,
    hosted_invoice_url: `${st.base}/receipts/${invoiceId(i)}`,
  };
}

/** The invoice PDF or the receipt page, with length, type and file name, for GET and HEAD. */
function fileOf(account: StripeAccountSeed, id: string, kind: 'pdf' | 'receipt'): Reply {
  const i = account.invoices.findIndex((_x, n) => invoiceId(n) === id);
  if (i < 0) return { status: 404, raw: 'not found' };
  const inv = account.invoices[i]!;
  const body = kind === 'pdf' ? Buffer.from(`%PDF-1.4\n% invoice ${inv.number}\n%%EOF\n`) : Buffer.from(`<!doctype html><title>Receipt ${inv.number}</title>`);
  const type = kind === 'pdf' ? 'application/pdf' : 'text/html; charset=utf-8';
  const name = kind === 'pdf' ? `Invoice-${inv.number}.pdf` : `Receipt-${inv.number}.html`;
  return {
    status: 200,
    raw: body,
    headers: { 'content-type': type, 'content-length': String(body.length), 'content-disposition': `inline; filename="${name}"` },
  };
}

type Headers = { headers: Record<string, string | string[] | undefined> };
const unauthorised = () => stripeError(401, 'invalid_request_error', 'Invalid API Key provided: sk_****');

function updateSubscription(st: State, req: Headers, body: string, id: string): Reply {
  const key = typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null;
  if (key && st.replays.has(key)) return { ...st.replays.get(key)!, headers: { 'idempotent-replayed': 'true' } };
  if (id !== SUBSCRIPTION_ID) return stripeError(404, 'invalid_request_error', `No such subscription: '${id}'`, 'resource_missing');
  const args = parseBody(body);
  const q = args['items[0][quantity]'];
  if (args['items[0][id]'] !== ITEM_ID || q === undefined || !/^\d+$/.test(q))
    return stripeError(400, 'invalid_request_error', 'Invalid items[0]', 'parameter_invalid_integer');
  if (Number(q) !== st.account.quantity) st.updates.push({ idempotencyKey: key, from: st.account.quantity, to: Number(q) });
  st.account.quantity = Number(q);
  const reply: Reply = { status: 200, body: subscriptionObject(st.account) };
  if (key) st.replays.set(key, reply);
  return reply;
}

function listInvoices(st: State, url: URL): Reply {
  if (url.searchParams.get('customer') !== st.account.customerId) return list('/v1/invoices', []);
  const all = st.account.invoices.map((inv, i) => invoiceObject(st, inv, i)).sort((a, b) => b.created - a.created);
  const limit = Math.min(Number(url.searchParams.get('limit') ?? 10) || 10, 100);
  const after = url.searchParams.get('starting_after');
  const from = after ? all.findIndex((x) => x.id === after) + 1 : 0;
  return list('/v1/invoices', all.slice(from, from + limit), from + limit < all.length);
}

function routes(st: State): Route[] {
  const authorised = (req: Headers) => req.headers.authorization === `Bearer ${st.account.secretKey}`;
  return [
    {
      method: 'GET',
      pattern: /^\/v1\/subscriptions$/,
      name: 'subscriptions.list',
      handler: ({ req, url }) => {
        if (!authorised(req)) return unauthorised();
        return list('/v1/subscriptions', url.searchParams.get('customer') === st.account.customerId ? [subscriptionObject(st.account)] : []);
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/subscriptions\/([^/]+)$/,
      name: 'subscriptions.update',
      handler: ({ req, body }, m) => (authorised(req) ? updateSubscription(st, req, body, m[1]!) : unauthorised()),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/invoices$/,
      name: 'invoices.list',
      handler: ({ req, url }) => (authorised(req) ? listInvoices(st, url) : unauthorised()),
    },
    ...(['GET', 'HEAD'] as const).flatMap((method) => [
      {
        method,
        pattern: /^\/files\/([^/]+)\.pdf$/,
        name: 'files',
        control: true,
        handler: (_c: unknown, m: RegExpExecArray) => fileOf(st.account, m[1]!, 'pdf'),
      },
      {
        method,
        pattern: /^\/receipts\/([^/]+)$/,
        name: 'receipts',
        control: true,
        handler: (_c: unknown, m: RegExpExecArray) => fileOf(st.account, m[1]!, 'receipt'),
      },
    ]),
  ];
}

export async function startStripeEmulator(account: StripeAccountSeed = generateStripeAccount(10), knobs: Knobs = defaultKnobs()): Promise<StripeEmulator> {
  const st: State = { account, updates: [], replays: new Map(), base: '' };
  const server = await serve(
    routes(st),
    {
      revokedReply: unauthorised,
      rateLimitedReply: (s) => ({ ...stripeError(429, 'invalid_request_error', 'Too many requests', 'rate_limit'), headers: { 'retry-after': String(s) } }),
      faultReply: () => stripeError(500, 'api_error', 'An unknown error occurred'),
      malformedReply: () => ({ status: 200, raw: '{"object": "list", "data": [' }),
    },
    knobs,
  );
  st.base = server.url;
  return { ...server, account, updates: st.updates, subscriptionId: SUBSCRIPTION_ID };
}
