/**
 * Billing against an emulated Stripe on loopback, through the official SDK: the mirror of the
 * subscription and invoices (GET /v1/financial_documents, GET /v1/workspace), and the seat sync
 * after directory runs, executed by graphile-worker.
 */
import type { Runner } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSubscription, stripeClient, updateQuantity } from '../../src/billing/provider.ts';
import { syncBilling, syncSeats } from '../../src/billing/sync.ts';
import { connectBilling } from '../../src/billing/billing.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { generateStripeAccount, startStripeEmulator, type StripeEmulator } from '../../emulators/stripe.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle } from '../helpers/fixtures.ts';
import { useApi } from './helpers.ts';

describe('billing: financial documents, plan and seats from the payment provider', () => {
  const api = useApi();
  let stripe: StripeEmulator;
  let google: GoogleEmulator;
  let directoryId: string;
  const extra = generateGoogleTenant(20).users.slice(10);

  const pool = () => api.t.ctx.pool;
  /** One directory run, executed in-process like the worker does. */
  const directoryRun = async () => {
    const [run] = await startRuns(pool(), api.ws, [directoryId], { trigger: 'api' });
    return (await executeRun(api.t.ctx, run!.id, { retry: { attempts: 1, baseDelayMs: 5, maxDelayMs: 10 } }))!;
  };
  let worker: Runner;
  /** Waits until graphile-worker (running the billing tasks) has no billing job left to try now. */
  const work = () =>
    waitFor(async () => {
      const { rows } = await pool().query(
        `select count(*)::int as n from graphile_worker.jobs where task_identifier in ('sync_seats', 'sync_billing') and (attempts = 0 or locked_at is not null)`,
      );
      return rows[0].n === 0;
    });
  const seatRows = async () =>
    (
      await pool().query(
        'select sync_run_id, previous_quantity, desired_quantity, status, reason from seat_syncs where workspace_id = $1 order by created_at',
        [api.ws],
      )
    ).rows;
  const teammates = async () =>
    (await pool().query('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [api.ws])).rows[0].n as number;

  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(10));
    stripe = await startStripeEmulator(generateStripeAccount(10, Date.UTC(2026, 9, 1) / 1000));
    directoryId = (await connectGoogle(api.t.ctx, api.ws, google.url)).id;
    await connectBilling(pool(), api.t.ctx.secrets, api.ws, {
      secretKey: stripe.account.secretKey,
      customerId: stripe.account.customerId,
      baseUrl: stripe.url,
    });
    worker = await startWorker(api.t.ctx, { only: ['sync_seats', 'sync_billing'], noCron: true, pollInterval: 50, concurrency: 2 });
  });
  afterAll(async () => {
    await worker?.stop();
    await google?.close();
    await stripe?.close();
  });

  it('the secret key is stored encrypted', async () => {
    const { rows } = await pool().query('select credentials from billing_accounts where workspace_id = $1', [api.ws]);
    expect(rows[0].credentials.toString('latin1')).not.toContain(stripe.account.secretKey);
  });

  it('the billing sync mirrors the two invoices into GET /v1/financial_documents, and the plan and seats into GET /v1/workspace', async () => {
    expect(await syncBilling(api.t.ctx, api.ws, api.t.ctx.logger)).toEqual({ invoices: 2, written: 2 });
    const docs = await api.call('GET', '/v1/financial_documents');
    expect(docs.status).toBe(200);
    expect(docs.body.pagination).toMatchObject({ total_count: 2, has_more: false });
    const [open, paid] = docs.body.data;
    expect(open).toMatchObject({ number: 'SIG-0002', total_amount_cents: 4000, kind: 'invoice', status: 'open', payment_receipt_url: null, receipt: null });
    expect(open.file).toEqual({
      url: `${stripe.url}/files/in_SANDBOX0002.pdf`,
      filename: 'Invoice-SIG-0002.pdf',
      content_type: 'application/pdf',
      byte_size: expect.any(Number),
    });
    expect(paid).toMatchObject({ number: 'SIG-0001', status: 'paid', payment_receipt_url: `${stripe.url}/receipts/in_SANDBOX0001` });
    expect(paid.receipt).toMatchObject({ url: paid.payment_receipt_url, filename: 'Receipt-SIG-0001.html', content_type: 'text/html' });
    expect(new Date(paid.period_end).getTime() - new Date(paid.period_start).getTime()).toBe(30 * 86_400_000);
    expect(paid.due_date).toMatch(/Z$/);
    // A second sync writes nothing.
    expect(await syncBilling(api.t.ctx, api.ws, api.t.ctx.logger)).toEqual({ invoices: 2, written: 0 });

    const ws = await api.call('GET', '/v1/workspace');
    expect(ws.body.data.plan).toEqual({
      tier: 'business',
      kind: 'paid',
      status: 'active',
      billing_interval: 'monthly',
      cancel_at_period_end: false,
      started_at: expect.stringMatching(/Z$/),
      ends_at: expect.stringMatching(/Z$/),
    });
    expect(ws.body.data.seat_count).toBe(10);
    // Another workspace sees no documents of this one.
    const theirs = await api.call('GET', '/v1/financial_documents', undefined, api.otherKey);
    expect(theirs.body).toMatchObject({ data: [], pagination: { total_count: 0, has_more: false } });
  });

  it('a directory sync that adds 3 people moves the quantity once, by 3, with the run as idempotency key', async () => {
    expect((await directoryRun()).status).toBe('succeeded');
    await work();
    expect(await teammates()).toBe(10);
    expect(stripe.updates).toEqual([]);
    google.tenant.users.push(...extra.slice(0, 3));
    const run = await directoryRun();
    expect(run.status).toBe('succeeded');
    await work();
    expect(await teammates()).toBe(13);
    expect(stripe.updates).toEqual([{ idempotencyKey: `sigsync-seats-${run.id}`, from: 10, to: 13 }]);
    expect((await seatRows()).map((r) => [r.status, r.previous_quantity, r.desired_quantity])).toEqual([
      ['unchanged', 10, 10],
      ['applied', 10, 13],
    ]);
    expect((await api.call('GET', '/v1/workspace')).body.data.seat_count).toBe(13);
    // The same run's job again does nothing.
    expect(await syncSeats(api.t.ctx, api.ws, run.id, api.t.ctx.logger)).toBeNull();
    expect(stripe.updates).toHaveLength(1);
  });

  it('a run that does not complete moves nothing, even with people gone', async () => {
    google.tenant.users.splice(0, 2);
    google.knobs.faultRoute = 'users.list';
    google.knobs.malformedAtRequest = (google.counters.byRoute['users.list'] ?? 0) + 1;
    const run = await directoryRun();
    google.knobs.malformedAtRequest = null;
    google.knobs.faultRoute = null;
    expect(run.status).toBe('failed');
    await work();
    expect(await teammates()).toBe(13);
    expect(stripe.updates).toHaveLength(1);
    expect(await seatRows()).toHaveLength(2);
    expect((await pool().query("select count(*)::int as n from graphile_worker.jobs where task_identifier = 'sync_seats'")).rows[0].n).toBe(0);
  });

  it('a payment-provider outage never blocks the directory sync; the seat update is recorded as failed and applied on retry', async () => {
    stripe.knobs.outageFromRequest = 1;
    google.tenant.users.push(...extra.slice(3, 7));
    const run = await directoryRun();
    expect(run.status).toBe('succeeded');
    await work();
    expect(await teammates()).toBe(15);
    const failed = (await seatRows()).at(-1);
    expect(failed).toMatchObject({ sync_run_id: run.id, status: 'failed', reason: expect.stringMatching(/error/i) });
    expect(stripe.updates).toHaveLength(1);
    stripe.knobs.outageFromRequest = null;
    // The job's retry (graphile-worker backs off; the retry is run here directly).
    expect(await syncSeats(api.t.ctx, api.ws, run.id, api.t.ctx.logger)).toMatchObject({ status: 'applied', previous: 13, desired: 15 });
    expect(stripe.updates.at(-1)).toEqual({ idempotencyKey: `sigsync-seats-${run.id}`, from: 13, to: 15 });
  });

  it('the provider replays an idempotency key already used instead of updating again', async () => {
    const client = stripeClient({ secret_key: stripe.account.secretKey }, stripe.url);
    const sub = (await readSubscription(client, stripe.account.customerId))!;
    const before = stripe.updates.length;
    expect((await updateQuantity(client, sub, 20, 'key-once')).quantity).toBe(20);
    expect((await updateQuantity(client, sub, 25, 'key-once')).quantity).toBe(20);
    expect(stripe.updates.length - before).toBe(1);
    expect(stripe.account.quantity).toBe(20);
  });
});
