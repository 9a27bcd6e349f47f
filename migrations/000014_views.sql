-- Up Migration
-- Signature views: the image each installed signature shows through the service (the campaign
-- banner's image, or a 1×1 image), its raw fetches, and view counts in the rollups. See
-- docs/analytics.md ("Views") and src/analytics/viewImages.ts, src/analytics/views.ts.

-- One tracked image as installed for one address under one signature: its id is what a view token
-- names (with an HMAC, src/analytics/token.ts). `url` is the banner image's own address ('' for the
-- 1×1 image); `campaign_id` is the campaign whose banner the signature showed, if any. Created on
-- first use and never changed, so rendering stays deterministic. No foreign keys to the signature,
-- campaign, teammate or address: images already sent keep answering after they go away.
create table view_images (
  id bigint generated always as identity primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  signature_id uuid not null,
  campaign_id uuid,
  teammate_id uuid not null,
  email_id uuid not null,
  url text not null default '',
  url_hash text not null generated always as (md5(url)) stored,
  created_at timestamptz not null default now(),
  unique nulls not distinct (signature_id, email_id, campaign_id, url_hash)
);

-- Raw views, append-only, written in batches by the view recorder: one row per fetch of a tracked
-- image. `viewer` is a keyed hash of the client address and user agent (for unique views); the
-- address itself is never stored. `proxy` names the image proxy or privacy preloader that fetched
-- it (src/analytics/proxies.ts); `bot_reason` another automated client. Pruned by time.
create table views (
  id uuid primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  viewed_at timestamptz not null,
  image_id bigint not null,
  signature_id uuid not null,
  campaign_id uuid,
  teammate_id uuid not null,
  email_id uuid not null,
  country_code text not null default '',
  viewer text not null,
  is_proxied boolean not null default false,
  proxy text check (proxy in ('gmail_image_proxy', 'apple_mail_privacy', 'yahoo_mail_proxy')),
  is_bot boolean not null default false,
  bot_reason text,
  check (is_proxied = (proxy is not null)),
  check (not (is_proxied and is_bot))
);
create index views_viewed_at on views using brin (viewed_at);
create index views_workspace_time on views (workspace_id, viewed_at);

-- View counts beside the click counts (same buckets and keys; no per-anchor views).
alter table analytics_rollups
  add column views integer not null default 0,
  add column proxied_views integer not null default 0,
  add column bot_views integer not null default 0,
  add column unique_views integer not null default 0,
  add column unique_direct_views integer not null default 0;

-- Down Migration
alter table analytics_rollups drop column if exists views, drop column if exists proxied_views, drop column if exists bot_views,
  drop column if exists unique_views, drop column if exists unique_direct_views;
drop table if exists views;
drop table if exists view_images;
