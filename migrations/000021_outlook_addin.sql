-- Up Migration
-- The Outlook add-in (src/addin/): which client last fetched which signature version of an address,
-- per platform (web, windows, mac, ios, android), for `sigsync install status --email`.
create table addin_clients (
  workspace_id uuid not null,
  email_id uuid not null,
  platform text not null check (platform in ('web', 'windows', 'mac', 'ios', 'android', 'unknown')),
  client_version text not null default '' check (length(client_version) <= 64),
  -- The combined hash of the variants served (the ETag).
  served_hash text not null,
  last_fetched_at timestamptz not null default now(),
  primary key (email_id, platform),
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade
);

-- Shared mailboxes (Entra: a disabled user account whose mailboxSettings.userPurpose is `shared`):
-- recipients of signatures with their own smart-field values, not people, and never counted as removed.
alter table teammates add column shared_mailbox boolean not null default false;

-- Down Migration
alter table teammates drop column if exists shared_mailbox;
drop table if exists addin_clients;
