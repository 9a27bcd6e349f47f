-- Up Migration
-- Installs: the pace every worker process shares per integration (src/install/pace.ts), and what a
-- mailbox installer learned about a mailbox (src/install/mailboxState.ts).

-- One row per signatures integration: when the next provider request may start. A worker reserves
-- the requests of one install with a single UPDATE that moves `next_at` on by cost / rate and
-- returns its start (a shared schedule, as in GCRA), so N worker processes together keep to one rate.
create table install_pace (
  integration_id uuid primary key,
  workspace_id uuid not null,
  -- Provider requests per second; null: unpaced (no quota configured, no 429 seen yet).
  rate_per_s double precision check (rate_per_s > 0),
  -- The integration config's quota_per_s the row started from; a new one starts the pace again.
  quota_per_s double precision,
  -- The quota, or the rate the last 429 refused: the pace rises quickly up to 98% of it, then slowly.
  ceiling_per_s double precision,
  next_at timestamptz not null default now(),
  -- The start of the last turn handed out.
  turn_at timestamptz not null default now(),
  -- Requests reserved in the current and the previous one-second window: the rate a 429 measures.
  window_start timestamptz not null default now(),
  window_sent double precision not null default 0,
  prev_window_sent double precision not null default 0,
  -- The pause the last 429 asked for; other 429s of the same burst change nothing.
  paused_until timestamptz,
  raised_at timestamptz not null default now(),
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade
);

-- Connector-owned knowledge about one mailbox (Gmail: its send-as addresses as last listed), so
-- that an install need not read the mailbox before writing it. The connector decides what it keeps
-- and when it is stale; the rows go with the address or the integration.
create table mailbox_install_state (
  email_id uuid not null,
  integration_id uuid not null,
  workspace_id uuid not null,
  state jsonb not null,
  updated_at timestamptz not null default now(),
  primary key (email_id, integration_id),
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade,
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade
);

-- The pause a 429 asks for is the pace's now (install_pace.next_at), shared the same way.
alter table integrations drop column install_not_before;

-- Down Migration
alter table integrations add column if not exists install_not_before timestamptz;
drop table if exists mailbox_install_state;
drop table if exists install_pace;
