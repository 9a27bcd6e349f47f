-- Up Migration
-- Directory sync bookkeeping: a run records each external id it saw, as active or as removed, so
-- that removals are applied only once the listing is complete.

alter table sync_run_seen add column removed boolean not null default false;

create index teammate_sources_integration on teammate_sources (integration_id, teammate_id);
create index smart_field_values_field on smart_field_values (smart_field_id);
create index groups_integration on groups (integration_id);

-- Down Migration
drop index if exists groups_integration;
drop index if exists smart_field_values_field;
drop index if exists teammate_sources_integration;
alter table sync_run_seen drop column if exists removed;
