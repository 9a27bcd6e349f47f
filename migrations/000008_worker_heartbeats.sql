-- Up Migration
-- One row per running worker process: the graphile-worker ids of its workers, and the key of a
-- session-level advisory lock that the process holds on its own connection for as long as it lives.
-- Postgres releases that lock the moment the process's connection goes away (exit, SIGKILL, lost
-- host), so "can another session take the lock?" is an exact liveness test, with no clock involved.
-- A starting worker (and every running one, periodically) releases the jobs locked by dead
-- processes' worker ids, instead of waiting for graphile-worker's 4-hour lock timeout.
create table worker_heartbeats (
  id serial primary key,
  worker_ids text[] not null default '{}',
  hostname text not null,
  pid integer not null,
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);

-- Down Migration
drop table if exists worker_heartbeats;
