-- Up Migration
-- A teammate's groups and org units are an array on each of its directory sources instead of a row
-- per membership: the groups this integration says the teammate is in, sorted and without
-- duplicates (src/teammates/teammates.ts writes them). A teammate's groups are the union of its
-- sources' arrays. A new person's array is written by the statement that inserts its source row,
-- where a membership row cost a primary key, an index and two foreign-key checks per group.
alter table teammate_sources add column group_ids uuid[] not null default '{}';

-- Each membership moves to the source row of its teammate in its group's integration. A membership
-- whose teammate has no source row of that integration (the integration stopped listing the
-- teammate, or removed it) is a stale one no directory reports any more: it is dropped, and the
-- next sync that lists the teammate in the group writes it again.
do $$
declare
  stale bigint;
begin
  select count(*) into stale
    from memberships m join groups g on g.workspace_id = m.workspace_id and g.id = m.group_id
   where not exists (select 1 from teammate_sources ts where ts.integration_id = g.integration_id and ts.teammate_id = m.teammate_id);
  if stale > 0 then
    raise notice '000031_source_group_ids: % memberships of teammates no longer listed by their group''s integration dropped', stale;
  end if;
end $$;

update teammate_sources ts set group_ids = m.ids
  from (select g.integration_id, m.teammate_id, array_agg(distinct m.group_id order by m.group_id) as ids
          from memberships m join groups g on g.workspace_id = m.workspace_id and g.id = m.group_id
         group by g.integration_id, m.teammate_id) m
 where ts.integration_id = m.integration_id and ts.teammate_id = m.teammate_id;

drop table memberships;

-- Down Migration
create table memberships (
  workspace_id uuid not null,
  group_id uuid not null,
  teammate_id uuid not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (group_id, teammate_id),
  foreign key (workspace_id, group_id) references groups (workspace_id, id) on delete cascade,
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade
);
create index memberships_teammate on memberships (teammate_id);
create trigger memberships_updated_at before update on memberships for each row execute function set_updated_at();

insert into memberships (workspace_id, group_id, teammate_id)
select distinct ts.workspace_id, x.group_id, ts.teammate_id
  from teammate_sources ts cross join unnest(ts.group_ids) as x(group_id)
  join groups g on g.workspace_id = ts.workspace_id and g.id = x.group_id;

alter table teammate_sources drop column group_ids;
