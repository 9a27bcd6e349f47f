-- Up Migration
-- REST API v1 and the campaign scheduler: indexes for the newest-first lists and the per-folder
-- signature counts, and the campaign invariant that a campaign past draft has a start time (the tick
-- compares it with the clock).

create index signatures_folder on signatures (workspace_id, folder_id) where folder_id is not null;
create index folders_workspace_created on folders (workspace_id, created_at desc);
create index smart_fields_workspace_created on smart_fields (workspace_id, created_at desc);
create index marketing_campaigns_workspace_created on marketing_campaigns (workspace_id, created_at desc);

alter table marketing_campaigns
  add constraint marketing_campaigns_scheduled_start check (status = 'draft' or start_time is not null);

-- Down Migration
alter table marketing_campaigns drop constraint if exists marketing_campaigns_scheduled_start;
drop index if exists marketing_campaigns_workspace_created;
drop index if exists smart_fields_workspace_created;
drop index if exists folders_workspace_created;
drop index if exists signatures_folder;
