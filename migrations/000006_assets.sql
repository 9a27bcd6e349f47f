-- Up Migration
-- Assets (images served at a public, unguessable URL) and profile photos copied from directories.
--
-- An asset's bytes live in Postgres, one row per distinct content per workspace (sha256), so the
-- same photo synced twice, or shared by two teammates, is stored once. `public_token` is the only
-- way to read an asset without an API key: GET /assets/{public_token}.

create table assets (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references workspaces (id) on delete cascade,
  name text not null check (length(name) between 1 and 200),
  role text not null check (role in ('company_logo', 'profile_photo', 'banner', 'image')),
  content_type text not null check (content_type in ('image/png', 'image/jpeg', 'image/gif', 'image/webp')),
  byte_size integer not null check (byte_size > 0),
  -- Hex sha256 of `data`: the deduplication key and the strong ETag.
  sha256 text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  data bytea not null,
  filename text check (filename is null or length(filename) between 1 and 255),
  -- 32 random bytes, base64url.
  public_token text not null unique check (public_token ~ '^[A-Za-z0-9_-]{43}$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (workspace_id, id),
  unique (workspace_id, sha256),
  check (byte_size = length(data))
);

-- Each directory user's photo as the directory last listed it (written by the directory sync, in
-- the page's transaction), and what the photo sync last fetched for it. The photo is downloaded
-- again only when the listed reference (etag, else URL) differs from `fetched_ref`.
create table teammate_photos (
  workspace_id uuid not null,
  -- The directory integration that lists the user.
  integration_id uuid not null,
  external_id text not null,
  teammate_id uuid not null,
  -- Null when the directory says the user has no photo.
  photo_url text,
  photo_etag text,
  -- The listed reference (coalesce(photo_etag, photo_url)) at the last fetch; null before the first.
  fetched_ref text,
  fetched_at timestamptz,
  -- sha256 of the last accepted download, to tell "same bytes" from "new photo" where the
  -- reference alone cannot (Microsoft Graph lists no photo etag).
  fetched_sha256 text,
  asset_id uuid,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (integration_id, external_id),
  foreign key (integration_id, external_id) references teammate_sources (integration_id, external_id) on delete cascade,
  foreign key (workspace_id, integration_id) references integrations (workspace_id, id) on delete cascade,
  foreign key (workspace_id, teammate_id) references teammates (workspace_id, id) on delete cascade,
  foreign key (workspace_id, asset_id) references assets (workspace_id, id) on delete set null (asset_id)
);
create index teammate_photos_teammate on teammate_photos (workspace_id, teammate_id);
create index teammate_photos_asset on teammate_photos (asset_id) where asset_id is not null;

create trigger assets_updated_at before update on assets for each row execute function set_updated_at();
create trigger teammate_photos_updated_at before update on teammate_photos for each row execute function set_updated_at();

-- Down Migration
drop table if exists teammate_photos;
drop table if exists assets;
