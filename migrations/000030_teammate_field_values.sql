-- Up Migration
-- A teammate's smart-field values become one document on its row (teammates.field_values), keyed by
-- smart-field id: {"<field id>": {"value": "...", "integration_id": "<uuid>"}} for a value an
-- integration wrote, {"<field id>": {"value": "..."}} for one set by hand (no integration_id key).
-- The row per value (smart_field_values) cost a directory sync one insert, three index entries and
-- three foreign-key checks per value; the document rides on the teammate's own insert or update.
-- The check holds the document to an object and the manual form to no integration_id key (never
-- a null one); a check of every member's shape cost about four times as much per insert (the
-- writers, all in src/teammates/teammates.ts, build the members).
alter table teammates add column field_values jsonb not null default '{}'
  constraint teammates_field_values_shape check (
    jsonb_typeof(field_values) = 'object' and not jsonb_path_exists(field_values, 'lax $.*.integration_id ? (@ == null)'));

-- Carry every value over without touching the teammates' updated_at.
alter table teammates disable trigger teammates_updated_at;
update teammates t set field_values = v.doc
  from (select teammate_id,
               jsonb_object_agg(smart_field_id::text, case when integration_id is null then jsonb_build_object('value', value)
                                                           else jsonb_build_object('value', value, 'integration_id', integration_id) end) as doc
          from smart_field_values group by teammate_id) v
 where t.id = v.teammate_id;
alter table teammates enable trigger teammates_updated_at;

drop table smart_field_values;

-- What the row's foreign keys did on delete: a smart field removed takes its key out of every
-- document of its workspace, an integration removed takes the values it wrote. Neither is deleted
-- by the service today but by a workspace's removal (which removes its teammates too); the triggers
-- keep it so for any other delete. Writers only take field ids already checked against the
-- workspace (src/sync/engine.ts and src/assets/photoSync.ts through mappedFields, the API through
-- shareFieldsForValues), as the foreign keys required.
create function drop_removed_field_values() returns trigger language plpgsql as $$
begin
  update teammates t set field_values = t.field_values - gone.keys
    from (select workspace_id, array_agg(id::text) as keys from removed group by workspace_id) gone
   where t.workspace_id = gone.workspace_id and t.field_values ?| gone.keys;
  return null;
end $$;
create trigger smart_fields_drop_values after delete on smart_fields
  referencing old table as removed for each statement execute function drop_removed_field_values();

create function drop_removed_integration_values() returns trigger language plpgsql as $$
begin
  update teammates t set field_values = (select coalesce(jsonb_object_agg(e.key, e.value), '{}') from jsonb_each(t.field_values) e
                                          where not coalesce(e.value->>'integration_id' = any(gone.ids), false))
    from (select workspace_id, array_agg(id::text) as ids from removed group by workspace_id) gone
   where t.workspace_id = gone.workspace_id
     and jsonb_path_exists(t.field_values, '$.*.integration_id ? (@ == $ids[*])', jsonb_build_object('ids', to_jsonb(gone.ids)));
  return null;
end $$;
create trigger integrations_drop_values after delete on integrations
  referencing old table as removed for each statement execute function drop_removed_integration_values();

-- Down Migration
drop trigger if exists integrations_drop_values on integrations;
drop function if exists drop_removed_integration_values();
drop trigger if exists smart_fields_drop_values on smart_fields;
drop function if exists drop_removed_field_values();

create table smart_field_values (
  workspace_id uuid not null,
  teammate_id uuid not null,
  smart_field_id uuid not null,
  value text not null,
  integration_id uuid,
  source text not null check (source in ('integration', 'manual')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (teammate_id, smart_field_id),
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade,
  foreign key (workspace_id, smart_field_id) references smart_fields (workspace_id, id) on delete cascade,
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade,
  check ((source = 'integration') = (integration_id is not null))
);
create index smart_field_values_longest on smart_field_values (smart_field_id, length(value) desc, teammate_id);
create trigger smart_field_values_updated_at before update on smart_field_values for each row execute function set_updated_at();

insert into smart_field_values (workspace_id, teammate_id, smart_field_id, value, integration_id, source)
select t.workspace_id, t.id, e.key::uuid, e.value->>'value', (e.value->>'integration_id')::uuid,
       case when e.value ? 'integration_id' then 'integration' else 'manual' end
  from teammates t cross join jsonb_each(t.field_values) e;

alter table teammates drop column field_values;
