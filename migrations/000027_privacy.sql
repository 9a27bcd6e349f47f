-- Up Migration
-- Tracking that is lawful by default (docs/privacy.md). Per workspace, what is tracked per person,
-- for views and for clicks apart:
--   per_person   the keyed hash of a client's address and user agent is kept on each row (unique
--                viewers and clickers; a click id ties a visitor and its conversions to the click)
--   aggregate    counts only: the key is kept for the repeat window (30 minutes, to tell repeats
--                apart) and then removed; no click id is handed out, so no visitor is linked
--   off          nothing is recorded
-- New workspaces start with views at `aggregate` and clicks at `per_person`; workspaces that exist
-- keep what they did until an administrator changes it. `analytics_retention_days` (null: the
-- deployment's ANALYTICS_RETENTION_DAYS) bounds how long raw rows and visitors are kept.
alter table workspaces
  add column views_tracking text not null default 'aggregate' check (views_tracking in ('per_person', 'aggregate', 'off')),
  add column clicks_tracking text not null default 'per_person' check (clicks_tracking in ('per_person', 'aggregate', 'off')),
  add column analytics_retention_days integer check (analytics_retention_days between 1 and 36500);
update workspaces set views_tracking = 'per_person';

-- A row whose key was removed keeps what the key decided: whether it repeats the same client's
-- previous one within the repeat window (src/analytics/privacy.ts marks it before removing the key).
alter table views alter column viewer drop not null, add column is_repeat boolean not null default false;
alter table clicks alter column clicker drop not null, add column is_repeat boolean not null default false;

-- Recipients who opted out through a signature's opt-out link: a browser (keyed hash of address and
-- user agent) and its address (keyed hash of the address alone). Rows with either key lose it, those
-- already recorded included, and the visitors their clicks brought are erased.
create table analytics_opt_outs (
  workspace_id uuid not null references workspaces (id) on delete cascade,
  kind text not null check (kind in ('browser', 'address')),
  key text not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, kind, key)
);

-- Down Migration
drop table if exists analytics_opt_outs;
alter table clicks drop column if exists is_repeat;
alter table views drop column if exists is_repeat;
alter table workspaces drop column if exists views_tracking, drop column if exists clicks_tracking, drop column if exists analytics_retention_days;
