-- Up Migration
-- The only reads of events by workspace are the privacy requests' (src/db/outbox.ts: the
-- visitor.identified and conversion.recorded events naming a visitor). The index on every event's
-- (workspace, type, occurred_at) was kept up to date for each teammate.created of a directory sync
-- (100,000 for a first sync of 100,000 people) and read for those two types only: it now holds
-- only them.
drop index events_workspace_type;
create index events_visitor on events (workspace_id) where type in ('visitor.identified', 'conversion.recorded');

-- Down Migration
drop index events_visitor;
create index events_workspace_type on events (workspace_id, type, occurred_at desc);
