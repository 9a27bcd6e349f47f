-- Up Migration
-- The service's own scheduled work is an actor of the audit trail too (src/db/audit.ts): the
-- experiment tick's automatic promotion of a winner changes what every sender's banner is, and the
-- trail says so with actor_kind 'system' and the job's name as the actor.
alter table audit_entries drop constraint audit_entries_actor_kind_check;
alter table audit_entries add constraint audit_entries_actor_kind_check check (actor_kind in ('console', 'api_key', 'cli', 'system'));

-- Down Migration
delete from audit_entries where actor_kind = 'system';
alter table audit_entries drop constraint audit_entries_actor_kind_check;
alter table audit_entries add constraint audit_entries_actor_kind_check check (actor_kind in ('console', 'api_key', 'cli'));
