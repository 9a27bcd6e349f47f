-- Up Migration
-- Who did what (src/db/audit.ts): every console action and every API write that changes content,
-- assignments, installs or keys, with its actor, action, target and time, scoped to a workspace and
-- read through GET /v1/audit_entries and the console's Activity page. Entries are never updated.
--   actor_kind  console (a signed-in person), api_key, cli
--   actor       who, as that kind names them: the person a sign-in link was made for, the key's name
--               and prefix, the CLI's user
--   actor_id    the console session or the API key
create table audit_entries (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  at timestamptz not null default clock_timestamp(),
  actor_kind text not null check (actor_kind in ('console', 'api_key', 'cli')),
  actor text not null,
  actor_id text,
  action text not null,
  target_kind text not null default '',
  target text not null default '',
  details jsonb not null default '{}'
);
create index audit_entries_workspace_at on audit_entries (workspace_id, at desc, id desc);

-- Whom a console sign-in link is for (`sigsync console link --as ADDRESS`); the session it opens
-- carries it as its subject, and the audit trail names it as the actor.
alter table console_sign_in_links add column subject text not null default '';

-- Down Migration
alter table console_sign_in_links drop column if exists subject;
drop table if exists audit_entries;
