-- Up Migration
-- One install at a time per mailbox slot (address, kind, integration). A burst of triggers can give
-- one slot two install jobs at once (graphile-worker's job key replaces a queued job, but adds a new
-- one beside a job that is already running). The job that installs holds the slot's row; the row
-- counts only while that job is locked, so a job that finishes, fails or dies with its worker
-- process (whose jobs are then unlocked) frees the slot without anyone cleaning up. No foreign
-- keys: a job for an address removed meanwhile still takes its slot, and finds nothing to install.
create table install_slots (
  email_id uuid not null,
  kind text not null,
  integration_id uuid not null,
  job_id bigint not null,
  acquired_at timestamptz not null default now(),
  primary key (email_id, kind, integration_id)
);

-- Down Migration
drop table if exists install_slots;
