-- Up Migration
-- Settings of the deployment as a whole, one row (src/db/deployment.ts): the fingerprint of the
-- ENCRYPTION_KEY the stored credentials are encrypted with, so that a process started with another
-- key refuses to start; and the public base URL the API server is reached at, so that every process
-- (workers, the CLI) renders the same links.
create table deployment (
  id boolean primary key default true check (id),
  key_fingerprint text,
  public_base_url text,
  updated_at timestamptz not null default now()
);
insert into deployment (id) values (true);

-- Down Migration
drop table if exists deployment;
