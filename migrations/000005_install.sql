-- Up Migration
-- Install pipeline state: the HTML last written to each mailbox (for the support replay's diff and
-- the Outlook add-in), and a per-integration "not before" time set by provider rate limits so that
-- every worker process slows down together.

alter table installations add column last_html text;
alter table installations add column last_provider_response jsonb;
alter table integrations add column install_not_before timestamptz;

create index installations_email on installations (email_id);
create index installations_integration_status on installations (integration_id, status);
create index assignments_signature on assignments (signature_id);
create index assignments_group on assignments (group_id) where group_id is not null;
create index assignments_teammate on assignments (teammate_id) where teammate_id is not null;

-- Down Migration
drop index if exists assignments_teammate;
drop index if exists assignments_group;
drop index if exists assignments_signature;
drop index if exists installations_integration_status;
drop index if exists installations_email;
alter table integrations drop column if exists install_not_before;
alter table installations drop column if exists last_provider_response;
alter table installations drop column if exists last_html;
