-- Up Migration
-- One execution of a run writes at a time: each execution claims the run with a fresh `executor`
-- id, and every page's transaction and the run's completion write only while the row still names
-- it. An older execution still alive (a job retried while its first attempt runs, a manual call)
-- finds the run taken at its next page and stops without writing.
alter table sync_runs add column executor uuid;
-- When an execution first took the run up: started_at to claimed_at is how long the run waited
-- for a worker.
alter table sync_runs add column claimed_at timestamptz;
-- Where a run's time went: milliseconds per write stage (stage, match, teammates, addresses,
-- memberships, values, events, ...) and per fetch, summed over its pages.
alter table sync_runs add column stage_ms jsonb not null default '{}'::jsonb check (jsonb_typeof(stage_ms) = 'object');

-- Down Migration
alter table sync_runs drop column if exists stage_ms;
alter table sync_runs drop column if exists claimed_at;
alter table sync_runs drop column if exists executor;
