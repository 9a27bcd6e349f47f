-- Up Migration
-- Banner experiments (docs/experiments.md): a campaign's banner split between two to four arms, each
-- teammate (sender) shown one arm by src/experiments/assignment.ts, until the analysis declares a
-- winner (the tick concludes it), the end is reached, or someone stops it. Owner:
-- src/experiments/experiments.ts.
--
-- Policy columns left null use the build's defaults (DEFAULT_POLICY in src/experiments/analysis.ts).
-- `results` keeps the analysis the experiment concluded with, so what was decided stays readable.
create table experiments (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  campaign_id uuid not null,
  name text not null check (length(name) between 1 and 200),
  status text not null default 'draft' check (status in ('draft', 'running', 'concluded', 'stopped')),
  mode text not null default 'ab' check (mode in ('ab', 'aa')),
  unit text not null default 'sender' check (unit in ('sender')),
  primary_metric text not null default 'human_ctr' check (primary_metric in ('human_ctr')),
  probability_to_win double precision check (probability_to_win > 0.5 and probability_to_win < 1),
  max_expected_loss double precision check (max_expected_loss > 0 and max_expected_loss < 1),
  min_exposures_per_arm integer check (min_exposures_per_arm >= 0),
  min_clicks_per_arm integer check (min_clicks_per_arm >= 0),
  alpha double precision check (alpha > 0 and alpha < 0.5),
  auto_promote boolean not null default false,
  start_time timestamptz,
  end_time timestamptz,
  started_at timestamptz,
  concluded_at timestamptz,
  winner_arm_id uuid,
  promoted_arm_id uuid,
  promoted_at timestamptz,
  results jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  foreign key (workspace_id, campaign_id) references marketing_campaigns (workspace_id, id) on delete cascade,
  check (end_time is null or start_time is null or end_time > start_time),
  -- A draft has not started; a running or concluded one has. A stopped one may have stopped as a draft.
  check (status <> 'draft' or started_at is null),
  check (status not in ('running', 'concluded') or started_at is not null),
  check ((status in ('concluded', 'stopped')) = (concluded_at is not null))
);
-- One running experiment per campaign: the render shows its arms in place of the campaign's banner.
create unique index experiments_one_running on experiments (campaign_id) where status = 'running';
create index experiments_workspace_campaign on experiments (workspace_id, campaign_id, created_at desc);
create index experiments_live on experiments (status) where status in ('draft', 'running');
create trigger experiments_updated_at before update on experiments for each row execute function set_updated_at();

-- The arms in their stable order (`position`; 0 is the control). `content` is a banner tree validated
-- as a campaign's; null only in A/A mode, where the arm shows the campaign's own banner.
create table experiment_arms (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null,
  experiment_id uuid not null,
  position smallint not null check (position between 0 and 3),
  name text not null check (length(name) between 1 and 100),
  weight double precision not null default 1 check (weight > 0 and weight <= 1000),
  content jsonb,
  created_at timestamptz not null default now(),
  unique (experiment_id, position),
  unique (experiment_id, name),
  unique (workspace_id, id),
  foreign key (workspace_id, experiment_id) references experiments (workspace_id, id) on delete cascade
);

-- What a render creates records the arm it showed, so every click (through its link's anchor) and
-- every view (through its image) joins to its arm. An arm's links are anchors of their own: two arms
-- linking the same address are told apart.
alter table anchors add column arm_id uuid;
alter table anchors drop constraint anchors_workspace_id_source_id_url_hash_key;
alter table anchors add constraint anchors_source_arm_url unique nulls not distinct (workspace_id, source_id, arm_id, url_hash);
create index anchors_arm on anchors (arm_id) where arm_id is not null;
alter table view_images add column arm_id uuid;
alter table view_images drop constraint view_images_signature_id_email_id_campaign_id_url_hash_key;
alter table view_images add constraint view_images_target_arm_url unique nulls not distinct (signature_id, email_id, campaign_id, arm_id, url_hash);
create index view_images_arm on view_images (arm_id) where arm_id is not null;

alter table events drop constraint events_type_check;
alter table events add constraint events_type_check check (type in (
  'conversion.recorded', 'visitor.identified', 'signature.published', 'signature.installation.failed',
  'teammate.created', 'teammate.deleted', 'campaign.scheduled', 'campaign.started', 'campaign.paused',
  'campaign.resumed', 'campaign.ended', 'integration.connected', 'integration.access_lost',
  'integration.disconnected', 'experiment.concluded'));

-- Down Migration
delete from events where type = 'experiment.concluded';
alter table events drop constraint events_type_check;
alter table events add constraint events_type_check check (type in (
  'conversion.recorded', 'visitor.identified', 'signature.published', 'signature.installation.failed',
  'teammate.created', 'teammate.deleted', 'campaign.scheduled', 'campaign.started', 'campaign.paused',
  'campaign.resumed', 'campaign.ended', 'integration.connected', 'integration.access_lost',
  'integration.disconnected'));
drop index if exists view_images_arm;
alter table view_images drop constraint if exists view_images_target_arm_url;
delete from view_images where arm_id is not null;
alter table view_images add constraint view_images_signature_id_email_id_campaign_id_url_hash_key unique nulls not distinct (signature_id, email_id, campaign_id, url_hash);
alter table view_images drop column if exists arm_id;
drop index if exists anchors_arm;
alter table anchors drop constraint if exists anchors_source_arm_url;
delete from anchors where arm_id is not null;
alter table anchors add constraint anchors_workspace_id_source_id_url_hash_key unique (workspace_id, source_id, url_hash);
alter table anchors drop column if exists arm_id;
drop table if exists experiment_arms;
drop table if exists experiments;
