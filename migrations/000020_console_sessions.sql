-- Up Migration
-- The console's sign-in (src/console/sessions.ts). A sign-in link is one-time and short-lived; a
-- session is the cookie of a signed-in browser. Only sha256 of either token is stored. `method` says
-- how the person signed in ('link' today; a Google or Microsoft account later), `subject` who, as
-- that method names them (the CLI user for a link).
create table console_sign_in_links (
  token_hash bytea primary key,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  created_by text not null default '',
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index console_sign_in_links_expires on console_sign_in_links (expires_at);

create table console_sessions (
  id uuid primary key default gen_random_uuid(),
  token_hash bytea not null unique,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  method text not null default 'link' check (method in ('link', 'google', 'microsoft')),
  subject text not null default '',
  csrf_token text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz
);
create index console_sessions_workspace on console_sessions (workspace_id);

-- Down Migration
drop table if exists console_sessions;
drop table if exists console_sign_in_links;
