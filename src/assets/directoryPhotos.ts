/**
 * The link between directory syncs and the photo sync:
 *
 * - recordDirectoryPhotos: inside a directory page's transaction, remembers where each listed user's
 *   photo is (URL and etag), since a photo source needs the URL (Slack) and the engine stores only
 *   one reference per user.
 * - recordPhotoFetched: the photo sync's result for one user: what it fetched, and the asset it
 *   stored (or none when the user has no photo).
 * After a directory run of a provider kind succeeds, the engine queues the photo sync of every
 * active `assets` integration of the same kind in the workspace (photoSyncTargets, then
 * requestPhotoSync of src/jobs/triggers.ts: one job per integration; a burst coalesces into one).
 */
import type { DirectoryUser } from '../../connectors/types.ts';
import type { Queryable } from '../db/tx.ts';

export async function recordDirectoryPhotos(db: Queryable, workspaceId: string, integrationId: string, users: readonly DirectoryUser[]): Promise<void> {
  const withPhoto: DirectoryUser[] = [];
  const without: DirectoryUser[] = [];
  for (const u of users) if (!u.removed) (u.photo?.url || u.photo?.etag ? withPhoto : without).push(u);
  // Users the page did not store (no email, duplicate address) have no teammate_sources row and are left out.
  if (withPhoto.length) {
    await db.query(
      `insert into teammate_photos (workspace_id, integration_id, external_id, teammate_id, photo_url, photo_etag)
       select ts.workspace_id, ts.integration_id, ts.external_id, ts.teammate_id, x.url, x.etag
         from unnest($3::text[], $4::text[], $5::text[]) x(ext, url, etag)
         join teammate_sources ts on ts.integration_id = $2 and ts.external_id = x.ext
        where ts.workspace_id = $1
       on conflict (integration_id, external_id) do update
          set teammate_id = excluded.teammate_id, photo_url = excluded.photo_url, photo_etag = excluded.photo_etag
        where (teammate_photos.teammate_id, teammate_photos.photo_url, teammate_photos.photo_etag)
              is distinct from (excluded.teammate_id, excluded.photo_url, excluded.photo_etag)`,
      [workspaceId, integrationId, withPhoto.map((u) => u.externalId), withPhoto.map((u) => u.photo!.url ?? null), withPhoto.map((u) => u.photo!.etag ?? null)],
    );
  }
  // A user without a photo has a row only if a photo went away, for the photo sync to clear it;
  // one the directory never showed a photo for has nothing to fetch or clear, and gets no row.
  if (without.length) {
    await db.query(
      `update teammate_photos tp set photo_url = null, photo_etag = null, teammate_id = ts.teammate_id
         from teammate_sources ts
        where tp.workspace_id = $1 and tp.integration_id = $2 and tp.external_id = any($3::text[])
          and ts.integration_id = tp.integration_id and ts.external_id = tp.external_id
          and (tp.photo_url, tp.photo_etag, tp.teammate_id) is distinct from (null::text, null::text, ts.teammate_id)`,
      [workspaceId, integrationId, without.map((u) => u.externalId)],
    );
  }
}

/**
 * Records that a user's photo was fetched at `ref` (its etag or URL). `asset`: the stored image,
 * null when the user has no photo, undefined to keep the current one (unchanged or rejected).
 */
export async function recordPhotoFetched(db: Queryable, workspaceId: string, integrationId: string, externalId: string, ref: string | null, asset: { id: string; sha256: string } | null | undefined): Promise<void> {
  await db.query(
    `update teammate_photos set fetched_ref = $4, fetched_at = now(),
            asset_id = case when $5 then $6::uuid else asset_id end,
            fetched_sha256 = case when $5 then $7 else fetched_sha256 end
      where workspace_id = $1 and integration_id = $2 and external_id = $3`,
    [workspaceId, integrationId, externalId, ref, asset !== undefined, asset?.id ?? null, asset?.sha256 ?? null],
  );
}

