/**
 * Owner of the billing tables (migrations/000011_billing.sql): billing_accounts,
 * financial_documents and seat_syncs. Routes, tasks, the sandbox and the CLI call these functions.
 */
import type { Secrets } from '../crypto/secrets.ts';
import type { BillingCredentials, InvoiceDoc, Plan, SubscriptionState } from './provider.ts';
import type { Queryable } from '../db/tx.ts';

export interface BillingAccount {
  workspaceId: string;
  credentials: BillingCredentials;
  baseUrl: string | undefined;
  customerId: string;
  seatCount: number | null;
}

export interface FileRef {
  url: string;
  filename: string;
  content_type: string;
  byte_size: number | null;
}

/** Stores (or replaces) the workspace's payment-provider account, its secret key sealed. */
export async function connectBilling(
  db: Queryable,
  secrets: Secrets,
  workspaceId: string,
  a: { secretKey: string; customerId: string; baseUrl?: string | undefined },
): Promise<void> {
  await db.query(
    `insert into billing_accounts (workspace_id, credentials, config, customer_id) values ($1, $2, $3, $4)
     on conflict (workspace_id) do update set credentials = excluded.credentials, config = excluded.config, customer_id = excluded.customer_id, last_error = null`,
    [
      workspaceId,
      secrets.encryptJson({ secret_key: a.secretKey } satisfies BillingCredentials),
      JSON.stringify(a.baseUrl ? { base_url: a.baseUrl } : {}),
      a.customerId,
    ],
  );
}

export async function loadBillingAccount(db: Queryable, secrets: Secrets, workspaceId: string): Promise<BillingAccount | undefined> {
  const { rows } = await db.query<{ credentials: Buffer; config: { base_url?: string }; customer_id: string; seat_count: number | null }>(
    'select credentials, config, customer_id, seat_count from billing_accounts where workspace_id = $1',
    [workspaceId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    workspaceId,
    credentials: secrets.decryptJson<BillingCredentials>(r.credentials),
    baseUrl: r.config.base_url,
    customerId: r.customer_id,
    seatCount: r.seat_count,
  };
}

export async function saveSubscription(db: Queryable, workspaceId: string, sub: SubscriptionState | null): Promise<void> {
  const p: Partial<Plan> = sub?.plan ?? {};
  await db.query(
    `update billing_accounts set subscription_id = $2, subscription_item_id = $3, seat_count = $4, plan_tier = $5, plan_kind = $6, plan_status = $7,
            plan_billing_interval = $8, plan_cancel_at_period_end = $9, plan_started_at = $10, plan_ends_at = $11, synced_at = now(), last_error = null
      where workspace_id = $1`,
    [
      workspaceId,
      sub?.id ?? null,
      sub?.itemId ?? null,
      sub?.quantity ?? null,
      p.tier ?? null,
      p.kind ?? null,
      p.status ?? null,
      p.billing_interval ?? null,
      p.cancel_at_period_end ?? null,
      p.started_at ?? null,
      p.ends_at ?? null,
    ],
  );
}

export async function recordBillingError(db: Queryable, workspaceId: string, message: string): Promise<void> {
  await db.query('update billing_accounts set last_error = $2 where workspace_id = $1', [workspaceId, message.slice(0, 2000)]);
}

/** Mirrors the provider's invoices: inserts new ones, updates changed ones (set-based, one statement). */
export async function upsertFinancialDocuments(
  db: Queryable,
  workspaceId: string,
  docs: (InvoiceDoc & { file: FileRef | null; receipt: FileRef | null })[],
): Promise<number> {
  if (!docs.length) return 0;
  const { rowCount } = await db.query(
    `insert into financial_documents (workspace_id, provider_id, number, total_amount_cents, currency, kind, status, payment_receipt_url,
                                      due_date, period_start, period_end, file, receipt, issued_at)
     select $1, d.provider_id, d.number, d.total_amount_cents, d.currency, 'invoice', d.status, d.payment_receipt_url,
            d.due_date, d.period_start, d.period_end, d.file, d.receipt, d.issued_at
       from jsonb_to_recordset($2::jsonb) as d(provider_id text, number text, total_amount_cents bigint, currency text, status text, payment_receipt_url text,
                                               due_date timestamptz, period_start timestamptz, period_end timestamptz, file jsonb, receipt jsonb, issued_at timestamptz)
     on conflict (workspace_id, provider_id) do update
        set number = excluded.number, total_amount_cents = excluded.total_amount_cents, currency = excluded.currency, status = excluded.status,
            payment_receipt_url = excluded.payment_receipt_url, due_date = excluded.due_date, period_start = excluded.period_start,
            period_end = excluded.period_end, file = excluded.file, receipt = excluded.receipt, issued_at = excluded.issued_at
      where (financial_documents.number, financial_documents.total_amount_cents, financial_documents.status, financial_documents.payment_receipt_url,
             financial_documents.due_date, financial_documents.period_start, financial_documents.period_end, financial_documents.file, financial_documents.receipt)
            is distinct from (excluded.number, excluded.total_amount_cents, excluded.status, excluded.payment_receipt_url,
             excluded.due_date, excluded.period_start, excluded.period_end, excluded.file, excluded.receipt)`,
    [
      workspaceId,
      JSON.stringify(
        docs.map((d) => ({
          provider_id: d.providerId,
          number: d.number,
          total_amount_cents: d.totalCents,
          currency: d.currency,
          status: d.status,
          payment_receipt_url: d.status === 'paid' ? d.hostedUrl : null,
          due_date: d.dueDate,
          period_start: d.periodStart,
          period_end: d.periodEnd,
          file: d.file,
          receipt: d.receipt,
          issued_at: d.issuedAt,
        })),
      ),
    ],
  );
  return rowCount ?? 0;
}

export interface FinancialDocumentRow {
  id: string;
  number: string | null;
  total_amount_cents: string;
  kind: string;
  status: string;
  payment_receipt_url: string | null;
  due_date: Date | null;
  period_start: Date | null;
  period_end: Date | null;
  file: FileRef | null;
  receipt: FileRef | null;
  created_at: Date;
  updated_at: Date;
}

/** One page of the workspace's financial documents, newest (by issue date) first. */
export async function listFinancialDocuments(
  db: Queryable,
  workspaceId: string,
  limit: number,
  offset: number,
): Promise<{ rows: FinancialDocumentRow[]; total: number }> {
  const count = await db.query<{ n: number }>('select count(*)::int as n from financial_documents where workspace_id = $1', [workspaceId]);
  const { rows } = await db.query<FinancialDocumentRow>(
    `select id, number, total_amount_cents, kind, status, payment_receipt_url, due_date, period_start, period_end, file, receipt, created_at, updated_at
       from financial_documents where workspace_id = $1 order by issued_at desc, id desc limit $2 offset $3`,
    [workspaceId, limit, offset],
  );
  return { rows, total: count.rows[0]?.n ?? 0 };
}

/** The plan and seat count GET /v1/workspace shows, when the workspace has a billing account. */
export async function workspacePlan(db: Queryable, workspaceId: string): Promise<{ plan: Record<string, unknown>; seat_count: number | null } | undefined> {
  const { rows } = await db.query(
    `select plan_tier, plan_kind, plan_status, plan_billing_interval, plan_cancel_at_period_end, plan_started_at, plan_ends_at, seat_count
       from billing_accounts where workspace_id = $1 and subscription_id is not null`,
    [workspaceId],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    plan: {
      tier: r.plan_tier,
      kind: r.plan_kind,
      status: r.plan_status,
      billing_interval: r.plan_billing_interval,
      cancel_at_period_end: r.plan_cancel_at_period_end,
      started_at: r.plan_started_at,
      ends_at: r.plan_ends_at,
    },
    seat_count: r.seat_count,
  };
}

export type SeatSyncStatus = 'pending' | 'applied' | 'unchanged' | 'skipped' | 'failed';

/** The seat sync of one directory run: created on first call, the same row on retries. */
export async function openSeatSync(
  db: Queryable,
  workspaceId: string,
  runId: string,
  desired: number,
): Promise<{ id: string; idempotencyKey: string; status: SeatSyncStatus }> {
  const { rows } = await db.query<{ id: string; idempotency_key: string; status: SeatSyncStatus }>(
    `insert into seat_syncs (workspace_id, sync_run_id, idempotency_key, desired_quantity, status, attempts)
     values ($1, $2, $4, $3, 'pending', 1)
     on conflict (sync_run_id) do update set attempts = seat_syncs.attempts + 1
     returning id, idempotency_key, status`,
    [workspaceId, runId, desired, `sigsync-seats-${runId}`],
  );
  return { id: rows[0]!.id, idempotencyKey: rows[0]!.idempotency_key, status: rows[0]!.status };
}

export async function closeSeatSync(db: Queryable, id: string, r: { status: SeatSyncStatus; previous: number | null; reason: string | null }): Promise<void> {
  await db.query('update seat_syncs set status = $2, previous_quantity = $3, reason = $4 where id = $1', [
    id,
    r.status,
    r.previous,
    r.reason?.slice(0, 2000) ?? null,
  ]);
}

/** Whether the workspace has a payment-provider account (a directory run then asks for a seat sync). */
export async function hasBillingAccount(db: Queryable, workspaceId: string): Promise<boolean> {
  return Boolean((await db.query('select 1 from billing_accounts where workspace_id = $1', [workspaceId])).rowCount);
}
