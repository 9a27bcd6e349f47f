-- Up Migration
-- Users listed before the provider's group memberships were known and unchanged but for their groups
-- (src/sync/pendingGroups.ts): their groups are compared and written when the listing ends.
alter table sync_run_seen add column groups_pending boolean not null default false;
create index sync_run_seen_groups_pending on sync_run_seen (run_id) where groups_pending;

-- Down Migration
drop index if exists sync_run_seen_groups_pending;
alter table sync_run_seen drop column if exists groups_pending;
