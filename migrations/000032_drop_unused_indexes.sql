-- Up Migration
-- Fewer and narrower indexes on the directory's write path: each index is one more insertion per
-- row written. Which indexes the queries use was measured over the test suite and the benchmarks
-- (TEST_INDEX_USAGE / BENCH_INDEX_USAGE, scripts/index-usage.ts); docs/architecture.md ("Indexes")
-- says why each of these goes and what serves its lookups now.

-- groups (integration_id): a prefix of the unique key (integration_id, kind, external_id), which
-- serves every lookup by integration.
drop index groups_integration;

-- teammate_sources (integration_id, teammate_id): lookups by integration take the primary key
-- (integration_id, external_id), lookups by teammate take teammate_sources_teammate.
drop index teammate_sources_integration;

-- events (workspace_id, type, occurred_at): every event entered it, and the only queries by workspace
-- read a visitor's events (erasure and access requests, src/db/outbox.ts), of two types. The index
-- holds those two types only: a teammate.created or a signature event no longer enters it.
drop index events_workspace_type;
create index events_visitor on events (workspace_id) where type in ('visitor.identified', 'conversion.recorded');

-- emails: the primary key was (id), and (workspace_id, id) a second unique key, the target of the
-- mailbox tables' keys. Every lookup of an address by id names its workspace, so (workspace_id, id)
-- is the primary key and the address has one unique index on its id instead of two.
alter table installations drop constraint installations_workspace_id_email_id_fkey;
alter table mailbox_install_state drop constraint mailbox_install_state_workspace_id_email_id_fkey;
alter table addin_clients drop constraint addin_clients_workspace_id_email_id_fkey;
alter table emails drop constraint emails_workspace_id_id_key;
alter table emails drop constraint emails_pkey;
alter table emails add constraint emails_pkey primary key (workspace_id, id);
alter table installations add constraint installations_workspace_id_email_id_fkey
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade;
alter table mailbox_install_state add constraint mailbox_install_state_workspace_id_email_id_fkey
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade;
alter table addin_clients add constraint addin_clients_workspace_id_email_id_fkey
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade;

-- Down Migration
alter table installations drop constraint installations_workspace_id_email_id_fkey;
alter table mailbox_install_state drop constraint mailbox_install_state_workspace_id_email_id_fkey;
alter table addin_clients drop constraint addin_clients_workspace_id_email_id_fkey;
alter table emails drop constraint emails_pkey;
alter table emails add constraint emails_pkey primary key (id);
alter table emails add constraint emails_workspace_id_id_key unique (workspace_id, id);
alter table installations add constraint installations_workspace_id_email_id_fkey
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade;
alter table mailbox_install_state add constraint mailbox_install_state_workspace_id_email_id_fkey
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade;
alter table addin_clients add constraint addin_clients_workspace_id_email_id_fkey
  foreign key (workspace_id, email_id) references emails (workspace_id, id) on delete cascade;

drop index events_visitor;
create index events_workspace_type on events (workspace_id, type, occurred_at desc);
create index teammate_sources_integration on teammate_sources (integration_id, teammate_id);
create index groups_integration on groups (integration_id);
