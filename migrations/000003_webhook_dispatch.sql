-- Up Migration
-- Webhook dispatch and delivery history.
--
-- Writing an event costs nothing extra unless its workspace has an enabled endpoint subscribed to its
-- type. A statement-level trigger on `events` puts such events on `webhook_dispatch_queue` and enqueues
-- ONE `dispatch_webhooks` job per workspace (job key `dispatch_webhooks:<workspace id>`, so a burst of
-- events coalesces into the job already waiting). That job turns queued events into one
-- `webhook_deliveries` row per subscribed endpoint and one `deliver_webhook` job per delivery
-- (src/events/dispatch.ts). Each HTTP attempt is a `webhook_delivery_attempts` row.

create table webhook_dispatch_queue (
  event_id uuid primary key references events (id) on delete cascade,
  workspace_id uuid not null references workspaces (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index webhook_dispatch_queue_workspace on webhook_dispatch_queue (workspace_id, created_at);

alter table webhook_endpoints
  add constraint webhook_endpoints_url_scheme check (url ~ '^https?://'),
  add constraint webhook_endpoints_disabled_reason check (enabled or disabled_reason is not null);

alter table webhook_deliveries
  -- When the next attempt is due while the delivery is pending after a failed attempt.
  add column next_attempt_at timestamptz,
  add constraint webhook_deliveries_delivered check ((status = 'succeeded') = (delivered_at is not null)),
  add constraint webhook_deliveries_next_attempt check (status = 'pending' or next_attempt_at is null);
create index webhook_deliveries_endpoint on webhook_deliveries (workspace_id, endpoint_id, created_at desc);

create table webhook_delivery_attempts (
  id uuid primary key default gen_random_uuid(),
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  -- 1 for the first attempt; the webhook-id header is the delivery id on every attempt.
  attempt integer not null check (attempt >= 1),
  -- succeeded: 2xx. retrying: failed, another attempt is scheduled. failed: failed for good.
  outcome text not null check (outcome in ('succeeded', 'retrying', 'failed')),
  -- The receiver's HTTP status; null when no response came (timeout, network error, refused address).
  status_code integer check (status_code between 100 and 599),
  duration_ms integer not null check (duration_ms >= 0),
  error text,
  next_attempt_at timestamptz,
  created_at timestamptz not null default now(),
  unique (delivery_id, attempt),
  check ((outcome = 'retrying') = (next_attempt_at is not null)),
  check ((outcome = 'succeeded') = (error is null))
);

create function webhook_enqueue_dispatch() returns trigger language plpgsql as $$
declare
  workspace_ids uuid[];
  w uuid;
  job record;
begin
  with queued as (
    insert into webhook_dispatch_queue (event_id, workspace_id)
    select n.id, n.workspace_id
      from new_events n
     where exists (select 1 from webhook_endpoints ep
                    where ep.workspace_id = n.workspace_id
                      and ep.enabled
                      and (ep.event_types is null or n.type = any (ep.event_types)))
    on conflict (event_id) do nothing
    returning workspace_id
  )
  select array_agg(distinct workspace_id) into workspace_ids from queued;
  -- preserve_run_at: a job already waiting keeps its turn (and will see these events, which commit
  -- with it); a running one may have read the queue already, so it gets a successor.
  foreach w in array coalesce(workspace_ids, '{}') loop
    select * into job from graphile_worker.add_job('dispatch_webhooks', json_build_object('workspaceId', w),
                                                    job_key := 'dispatch_webhooks:' || w,
                                                    job_key_mode := 'preserve_run_at');
    if job.id is null then
      -- The waiting job was taken by a worker between add_job's check and its upsert, so nothing was
      -- added; asking again now gives the running job a successor.
      select * into job from graphile_worker.add_job('dispatch_webhooks', json_build_object('workspaceId', w),
                                                      job_key := 'dispatch_webhooks:' || w,
                                                      job_key_mode := 'preserve_run_at');
    end if;
  end loop;
  return null;
end $$;

create trigger events_webhook_dispatch after insert on events
  referencing new table as new_events
  for each statement execute function webhook_enqueue_dispatch();

-- Down Migration
drop trigger if exists events_webhook_dispatch on events;
drop function if exists webhook_enqueue_dispatch();
drop table if exists webhook_delivery_attempts, webhook_dispatch_queue;
drop index if exists webhook_deliveries_endpoint;
alter table webhook_deliveries
  drop constraint if exists webhook_deliveries_next_attempt,
  drop constraint if exists webhook_deliveries_delivered,
  drop column if exists next_attempt_at;
alter table webhook_endpoints
  drop constraint if exists webhook_endpoints_disabled_reason,
  drop constraint if exists webhook_endpoints_url_scheme;
