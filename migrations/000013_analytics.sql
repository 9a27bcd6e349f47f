-- Up Migration
-- Signature analytics: tracked links (anchors and the per-mailbox links that carry their tokens)
-- and raw clicks. See docs/api.md (Analytics) and src/analytics/.

-- An anchor is one distinct link (http or https destination) of one signature template or one
-- campaign banner, with a stable uuid. No foreign key to the signature or campaign: links already
-- sent keep working after either is deleted.
create table anchors (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  source_kind text not null check (source_kind in ('signature', 'campaign')),
  source_id uuid not null,
  url text not null,
  url_hash text not null generated always as (md5(url)) stored,
  created_at timestamptz not null default now(),
  unique (workspace_id, source_id, url_hash)
);

-- One anchor as installed for one address under one signature: its id is what a click token names
-- (with an HMAC, src/analytics/token.ts). Kept when the address or teammate goes away, for the same
-- reason as above.
create table anchor_links (
  id bigint generated always as identity primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  anchor_id uuid not null references anchors (id) on delete cascade,
  signature_id uuid not null,
  teammate_id uuid not null,
  email_id uuid not null,
  created_at timestamptz not null default now(),
  unique (anchor_id, signature_id, email_id)
);

-- Raw clicks, append-only, written in batches by the click recorder. `id` is the click_id handed to
-- the destination (it names its link, src/analytics/token.ts). `clicker` is a keyed hash of the client address and user agent (for unique
-- clickers); the address itself is never stored. Pruned by time (BRIN on clicked_at).
create table clicks (
  id text primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  clicked_at timestamptz not null,
  link_id bigint not null,
  anchor_id uuid not null,
  signature_id uuid not null,
  campaign_id uuid,
  teammate_id uuid not null,
  email_id uuid not null,
  country_code text not null default '',
  clicker text not null,
  is_bot boolean not null default false,
  bot_reason text
);
create index clicks_clicked_at on clicks using brin (clicked_at);
create index clicks_workspace_time on clicks (workspace_id, clicked_at);

-- A visitor of the customer's site who arrived through a signature click: first touch kept, traits
-- merged. Known by `user_id` once identified, by `anonymous_id` (the browser script's cookie) before.
create table visitors (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  user_id text,
  anonymous_id text,
  traits jsonb not null default '{}' check (jsonb_typeof(traits) = 'object'),
  first_click_id text,
  first_link_id bigint,
  first_seen_at timestamptz not null,
  last_seen_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (user_id is not null or anonymous_id is not null)
);
create unique index visitors_user_id on visitors (workspace_id, user_id) where user_id is not null;
create unique index visitors_anonymous_id on visitors (workspace_id, anonymous_id) where anonymous_id is not null;
create index visitors_recent on visitors (workspace_id, created_at desc, id desc);

-- Recorded events (spec 2.11), append-only: from the API (`api`) and the browser script
-- (`browser`). `event_id` is the sender's idempotency key: one row per key and workspace.
-- Attribution comes from the click id (or the visitor's first touch); `link_id` is that click's link.
create table recorded_events (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  event_id text,
  recorded_at timestamptz not null default now(),
  name text not null,
  value double precision,
  currency text not null default '',
  source text not null check (source in ('api', 'browser')),
  click_id text,
  link_id bigint,
  anchor_id uuid,
  signature_id uuid,
  campaign_id uuid,
  teammate_id uuid,
  email_id uuid,
  country_code text not null default '',
  visitor_id uuid,
  anonymous_id text,
  user_id text,
  properties jsonb not null default '{}' check (jsonb_typeof(properties) = 'object')
);
create unique index recorded_events_event_id on recorded_events (workspace_id, event_id) where event_id is not null;
create index recorded_events_recent on recorded_events (workspace_id, recorded_at desc, id desc);
create index recorded_events_recorded_at on recorded_events using brin (recorded_at);

-- Rollups the reports read (src/analytics/rollups.ts rebuilds the recent ones every minute from the
-- raw rows; older ones stay when retention removes raw rows). One row per grain ('day', or 'hour'
-- for the overview and anchors), bucket start (UTC), dimension and key: dimension 'total' (key ''),
-- 'signature', 'campaign', 'teammate', 'country', 'anchor'.
create table analytics_rollups (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  grain text not null check (grain in ('day', 'hour')),
  bucket timestamptz not null,
  dimension text not null,
  key text not null,
  clicks integer not null default 0,
  human_clicks integer not null default 0,
  bot_clicks integer not null default 0,
  unique_clickers integer not null default 0,
  visitors integer not null default 0,
  events integer not null default 0,
  conversions integer not null default 0,
  primary key (workspace_id, dimension, grain, bucket, key)
);
create index analytics_rollups_key on analytics_rollups (workspace_id, dimension, key, grain, bucket);

-- Conversion value per currency, on the same buckets and keys.
create table analytics_rollup_values (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  grain text not null check (grain in ('day', 'hour')),
  bucket timestamptz not null,
  dimension text not null,
  key text not null,
  currency text not null,
  conversions integer not null,
  value double precision not null,
  primary key (workspace_id, dimension, grain, bucket, key, currency)
);

-- Down Migration
drop table if exists analytics_rollup_values;
drop table if exists analytics_rollups;
drop table if exists recorded_events;
drop table if exists visitors;
drop table if exists clicks;
drop table if exists anchor_links;
drop table if exists anchors;
