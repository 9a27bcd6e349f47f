-- Up Migration
-- What a browser may decide in the analytics, and for how long a click attributes (docs/analytics.md,
-- "Trust"). Workspace settings (an extension of spec 2.12: GET/PATCH /v1/workspace/analytics_settings,
-- `sigsync workspace analytics`):
--   browser_values_enabled    a value sent by the browser script counts as money (default off)
--   browser_value_cap         the largest browser value that counts, in the event's currency units
--   attribution_window_days   a click attributes events sent within this many days of it
--   conversions_per_click     conversions one click id attributes at most (events sent with it)
alter table workspaces
  add column browser_values_enabled boolean not null default false,
  add column browser_value_cap double precision not null default 1000 check (browser_value_cap >= 0 and browser_value_cap <= 1e12),
  add column attribution_window_days integer not null default 30 check (attribution_window_days between 1 and 365),
  add column conversions_per_click integer not null default 1 check (conversions_per_click between 1 and 1000);

-- The raw facts behind a recorded event's figures, kept so that the rules can change and be applied
-- again: the value the sender claimed (`value` is what counts as money), why a click id sent with
-- the event did not attribute it, and whether conversion.recorded fired for it.
alter table recorded_events
  add column claimed_value double precision,
  add column unattributed_reason text check (unattributed_reason in ('attribution_window', 'conversions_per_click')),
  add column conversion_emitted boolean not null default false,
  add column upgraded_at timestamptz;
update recorded_events set claimed_value = value, conversion_emitted = (value is not null and link_id is not null);
create index recorded_events_click_conversions on recorded_events (workspace_id, click_id) where click_id is not null and value is not null and link_id is not null;

-- Trait keys last written through the authenticated API: the browser never overwrites them.
alter table visitors add column api_trait_keys text[] not null default '{}';

-- Down Migration
alter table visitors drop column if exists api_trait_keys;
drop index if exists recorded_events_click_conversions;
alter table recorded_events drop column if exists claimed_value, drop column if exists unattributed_reason, drop column if exists conversion_emitted, drop column if exists upgraded_at;
alter table workspaces drop column if exists browser_values_enabled, drop column if exists browser_value_cap, drop column if exists attribution_window_days, drop column if exists conversions_per_click;
