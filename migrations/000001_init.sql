-- Up Migration
-- The service schema. Every table that belongs to a workspace carries workspace_id, and child rows
-- reference their parent through (workspace_id, id) so a row can never point into another workspace.
-- Enums are CHECK constraints; natural keys are UNIQUE; every foreign key states its ON DELETE.

create function set_updated_at() returns trigger language plpgsql as $$
begin
  new.updated_at := now();
  return new;
end $$;

create table workspaces (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  plan_tier text not null default 'free',
  plan_kind text not null default 'free_trial',
  plan_status text not null default 'active',
  plan_billing_interval text not null default 'monthly' check (plan_billing_interval in ('monthly', 'yearly')),
  plan_cancel_at_period_end boolean not null default false,
  plan_started_at timestamptz not null default now(),
  plan_ends_at timestamptz,
  event_tracking_id uuid not null default gen_random_uuid(),
  event_tracking_enabled boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null default 'default',
  -- The first characters of the key, kept in clear to find the row and to show in listings.
  prefix text not null unique,
  -- sha256 of the whole key; the key itself is never stored.
  key_hash bytea not null check (length(key_hash) = 32),
  last_used_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index api_keys_workspace_idx on api_keys (workspace_id);

create table integrations (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  kind text not null check (kind in ('google_workspace', 'microsoft_entra', 'slack')),
  category text not null check (category in ('teammates', 'signatures', 'smart_fields', 'assets')),
  name text not null check (length(name) between 1 and 200),
  status text not null default 'active' check (status in ('active', 'access_lost', 'disconnected')),
  activated boolean not null default true,
  -- AES-256-GCM ciphertext of the provider credentials (src/crypto/secrets.ts).
  credentials bytea not null,
  config jsonb not null default '{}' check (jsonb_typeof(config) = 'object'),
  -- Incremental sync state (e.g. a Graph deltaLink), written only after a complete listing.
  sync_cursor jsonb,
  sync_cursor_at timestamptz,
  last_full_sync_at timestamptz,
  error_message text,
  error_since timestamptz,
  dashboard_url text,
  -- Set the first time the integration becomes active; integration.connected fires only then.
  connected_at timestamptz,
  disconnected_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  check ((status = 'access_lost') = (error_since is not null))
);

create table sync_runs (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  integration_id uuid not null,
  status text not null default 'running'
    check (status in ('running', 'succeeded', 'failed', 'needs_confirmation', 'cancelled')),
  trigger text not null check (trigger in ('api', 'schedule', 'cli', 'reconnect', 'confirm')),
  mode text not null default 'full' check (mode in ('full', 'delta')),
  -- Why a delta run fell back to a full listing, when it did.
  fallback_reason text,
  confirm_deletions boolean not null default false,
  pages integer not null default 0,
  seen integer not null default 0,
  created integer not null default 0,
  updated integer not null default 0,
  unchanged integer not null default 0,
  deleted integer not null default 0,
  skipped integer not null default 0,
  errors integer not null default 0,
  rate_limit_waits integer not null default 0,
  pending_deletions integer not null default 0,
  -- Where a crashed run resumes: the provider's page token after the last written page.
  checkpoint jsonb,
  error_code text,
  error text,
  error_details jsonb not null default '[]' check (jsonb_typeof(error_details) = 'array'),
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade,
  check ((status = 'running') = (finished_at is null))
);
-- One running run per integration, however many triggers race.
create unique index sync_runs_one_running on sync_runs (integration_id) where status = 'running';
create index sync_runs_workspace_started on sync_runs (workspace_id, started_at desc);

-- External ids seen by a run, so a complete listing can tell who disappeared.
create table sync_run_seen (
  run_id uuid not null references sync_runs (id) on delete cascade,
  external_id text not null,
  primary key (run_id, external_id)
);

create table teammates (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  display_name text not null default '',
  given_name text,
  family_name text,
  deleted_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id)
);
create index teammates_workspace_created on teammates (workspace_id, created_at desc);

-- A teammate as one directory integration knows it (external id per integration).
create table teammate_sources (
  workspace_id uuid not null,
  integration_id uuid not null,
  external_id text not null,
  teammate_id uuid not null,
  photo_ref text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (integration_id, external_id),
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade,
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade
);
create index teammate_sources_teammate on teammate_sources (teammate_id);

create table emails (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  teammate_id uuid not null,
  address text not null check (address ~ '^[^@\s]+@[^@\s]+$' and length(address) <= 320),
  is_primary boolean not null default false,
  -- The directory integration that reported this address, or null when added by hand.
  integration_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade,
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete set null (integration_id)
);
create unique index emails_address_unique on emails (workspace_id, lower(address));
create unique index emails_one_primary on emails (teammate_id) where is_primary;
create index emails_teammate on emails (teammate_id);

-- Directory groups and org units.
create table groups (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  integration_id uuid not null,
  kind text not null check (kind in ('group', 'org_unit')),
  external_id text not null,
  name text not null,
  email text,
  path text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  unique (integration_id, kind, external_id),
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade
);

create table memberships (
  workspace_id uuid not null,
  group_id uuid not null,
  teammate_id uuid not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (group_id, teammate_id),
  foreign key (workspace_id, group_id) references groups (workspace_id, id) on delete cascade,
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade
);
create index memberships_teammate on memberships (teammate_id);

create table smart_fields (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  label text not null check (length(label) between 1 and 100),
  slug text not null check (slug ~ '^[a-z0-9][a-z0-9_]{0,62}$'),
  kind text not null default 'text' check (kind in ('text', 'email', 'phone', 'url', 'image')),
  required boolean not null default false,
  is_default boolean not null default false,
  position integer not null default 0,
  integration_id uuid,
  -- A path into the directory user's attribute map, e.g. organizations.primary.title.
  integration_attribute text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  unique (workspace_id, slug),
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete set null (integration_id),
  check ((integration_id is null) or (integration_attribute is not null))
);

create table smart_field_values (
  workspace_id uuid not null,
  teammate_id uuid not null,
  smart_field_id uuid not null,
  value text not null,
  -- Set when the value comes from an integration; such values cannot be edited by hand.
  integration_id uuid,
  source text not null check (source in ('integration', 'manual')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (teammate_id, smart_field_id),
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade,
  foreign key (workspace_id, smart_field_id) references smart_fields (workspace_id, id) on delete cascade,
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade,
  check ((source = 'integration') = (integration_id is not null))
);

create table folders (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  unique (workspace_id, name)
);

create table signatures (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  folder_id uuid,
  name text not null check (length(name) between 1 and 200),
  content jsonb,
  draft_content jsonb not null,
  last_published_at timestamptz,
  installation_activated boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  foreign key (workspace_id, folder_id) references folders (workspace_id, id) on delete set null (folder_id)
);
create index signatures_workspace_created on signatures (workspace_id, created_at desc);

create table signature_variants (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  signature_id uuid not null,
  kind text not null check (kind in ('reply', 'internal')),
  activated boolean not null default false,
  hidden boolean not null default false,
  show_marketing_campaigns boolean not null default false,
  content jsonb,
  draft_content jsonb,
  last_published_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (signature_id, kind),
  foreign key (workspace_id, signature_id) references signatures (workspace_id, id) on delete cascade
);

create table assignments (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  signature_id uuid not null,
  target_kind text not null check (target_kind in ('teammate', 'group', 'org_unit')),
  teammate_id uuid,
  group_id uuid,
  -- Higher wins where a mailbox takes only one signature.
  priority integer not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (workspace_id, signature_id) references signatures (workspace_id, id) on delete cascade,
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade,
  foreign key (workspace_id, group_id) references groups (workspace_id, id) on delete cascade,
  check ((target_kind = 'teammate') = (teammate_id is not null)),
  check ((target_kind <> 'teammate') = (group_id is not null))
);
create unique index assignments_teammate_unique on assignments (signature_id, teammate_id) where teammate_id is not null;
create unique index assignments_group_unique on assignments (signature_id, group_id) where group_id is not null;

create table installations (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  email_id uuid not null,
  signature_id uuid not null,
  kind text not null check (kind in ('primary', 'reply', 'internal')),
  integration_id uuid not null,
  status text not null default 'pending'
    check (status in ('installed', 'pending', 'not_activated', 'not_installed', 'failed', 'not_supported', 'access_lost')),
  -- sha256 of the HTML last written to the provider.
  content_hash text,
  error_code text,
  error_message text,
  failing_since timestamptz,
  installed_at timestamptz,
  attempts integer not null default 0,
  last_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (email_id, signature_id, kind, integration_id),
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade,
  foreign key (workspace_id, signature_id) references signatures (workspace_id, id) on delete cascade,
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade,
  check ((status = 'failed') = (failing_since is not null))
);
create index installations_workspace on installations (workspace_id, status);

-- The outbox: one row per webhook event, written in the transaction of the change it reports.
create table events (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  type text not null check (type in (
    'conversion.recorded', 'visitor.identified', 'signature.published', 'signature.installation.failed',
    'teammate.created', 'teammate.deleted', 'campaign.scheduled', 'campaign.started', 'campaign.paused',
    'campaign.resumed', 'campaign.ended', 'integration.connected', 'integration.access_lost',
    'integration.disconnected')),
  payload jsonb not null check (jsonb_typeof(payload) = 'object'),
  occurred_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index events_workspace_type on events (workspace_id, type, occurred_at desc);

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  url text not null,
  -- AES-256-GCM ciphertext of the signing secret.
  secret bytea not null,
  -- null means every event type.
  event_types text[],
  enabled boolean not null default true,
  consecutive_failures integer not null default 0,
  disabled_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id)
);

create table webhook_deliveries (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  event_id uuid not null references events (id) on delete cascade,
  endpoint_id uuid not null,
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts integer not null default 0,
  last_status_code integer,
  last_duration_ms integer,
  last_error text,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (event_id, endpoint_id),
  foreign key (workspace_id, endpoint_id) references webhook_endpoints (workspace_id, id) on delete cascade
);

create table marketing_campaigns (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  status text not null default 'draft' check (status in ('draft', 'scheduled', 'active', 'paused', 'archived')),
  behaviour text not null default 'replace' check (behaviour in ('replace')),
  filter_kind text not null default 'signature_templates' check (filter_kind in ('signature_templates')),
  send_email boolean not null default false,
  content jsonb,
  smart_fields_conditions jsonb not null default '[]' check (jsonb_typeof(smart_fields_conditions) = 'array'),
  signature_template_ids uuid[] not null default '{}',
  start_time timestamptz,
  end_time timestamptz,
  time_zone text not null default 'UTC',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  check (end_time is null or start_time is null or end_time > start_time)
);
create index marketing_campaigns_live on marketing_campaigns (status) where status in ('scheduled', 'active', 'paused');

do $$
declare t text;
begin
  foreach t in array array['workspaces', 'api_keys', 'integrations', 'sync_runs', 'teammates', 'teammate_sources',
    'emails', 'groups', 'memberships', 'smart_fields', 'smart_field_values', 'folders', 'signatures',
    'signature_variants', 'assignments', 'installations', 'events', 'webhook_endpoints', 'webhook_deliveries',
    'marketing_campaigns']
  loop
    execute format('create trigger %I before update on %I for each row execute function set_updated_at()',
      t || '_updated_at', t);
  end loop;
end $$;

-- Down Migration
drop table if exists marketing_campaigns, webhook_deliveries, webhook_endpoints, events, installations,
  assignments, signature_variants, signatures, folders, smart_field_values, smart_fields, memberships, groups,
  emails, teammate_sources, teammates, sync_run_seen, sync_runs, integrations, api_keys, workspaces cascade;
drop function if exists set_updated_at();
