-- Up Migration
-- Billing: the workspace's subscription at a payment provider (Stripe), its invoices mirrored as
-- financial documents, and a record of every seat-count update the directory syncs caused.
-- Owner module: src/db/billing.ts.

-- One payment-provider account per workspace. `credentials` is the AES-256-GCM sealed
-- {"secret_key": ...} (src/crypto/secrets.ts), like integrations' credentials. The plan columns and
-- `seat_count` mirror the subscription as last read.
create table billing_accounts (
  workspace_id uuid primary key references workspaces (id) on delete cascade,
  provider text not null default 'stripe' check (provider in ('stripe')),
  credentials bytea not null,
  -- {"base_url": "..."} points the SDK elsewhere (sandbox, tests).
  config jsonb not null default '{}'::jsonb,
  customer_id text not null check (length(customer_id) between 1 and 255),
  subscription_id text,
  subscription_item_id text,
  plan_tier text,
  plan_kind text,
  plan_status text,
  plan_billing_interval text,
  plan_cancel_at_period_end boolean,
  plan_started_at timestamptz,
  plan_ends_at timestamptz,
  seat_count integer check (seat_count is null or seat_count >= 0),
  synced_at timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table financial_documents (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  -- The provider's id (Stripe: in_...), the key of the mirror.
  provider_id text not null,
  number text,
  total_amount_cents bigint not null,
  currency text,
  kind text not null check (kind in ('invoice')),
  status text not null check (status in ('draft', 'open', 'paid', 'uncollectible', 'void')),
  payment_receipt_url text,
  due_date timestamptz,
  period_start timestamptz,
  period_end timestamptz,
  -- {url, filename, content_type, byte_size} or null.
  file jsonb,
  receipt jsonb,
  issued_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, provider_id),
  unique (workspace_id, id)
);
create index financial_documents_list on financial_documents (workspace_id, issued_at desc, id desc);

-- One row per directory sync run that asked for a seat update: what was asked, what was done.
create table seat_syncs (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  sync_run_id uuid not null unique,
  -- Sent as the provider's Idempotency-Key: a retried job never updates twice.
  idempotency_key text not null unique,
  previous_quantity integer,
  desired_quantity integer not null check (desired_quantity >= 0),
  status text not null check (status in ('pending', 'applied', 'unchanged', 'skipped', 'failed')),
  reason text,
  attempts integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index seat_syncs_workspace on seat_syncs (workspace_id, created_at desc);

create trigger billing_accounts_updated_at before update on billing_accounts for each row execute function set_updated_at();
create trigger financial_documents_updated_at before update on financial_documents for each row execute function set_updated_at();
create trigger seat_syncs_updated_at before update on seat_syncs for each row execute function set_updated_at();

-- Down Migration
drop table if exists seat_syncs;
drop table if exists financial_documents;
drop table if exists billing_accounts;
