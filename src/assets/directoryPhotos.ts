/**
 * The link between directory syncs and the photo sync:
 *
 * - recordDirectoryPhotos: inside a directory page's transaction, remembers where each listed user's
 *   photo is (URL and etag), since a photo source needs the URL (Slack) and the engine stores only
 *   one reference per user.
 * - recordPhotoFetched: the photo sync's result for one user: what it fetched, and the asset it
 *   stored (or none when the user has no photo).
 * After a directory run of a provider kind succeeds, the engine queues the photo sync of every
 * active `assets` integration of the same kind in the workspace (integrationIdsOfKind, then
 * requestPhotoSync of src/jobs/triggers.ts: one job per integration; a burst coalesces into one).
 */
import type { DirectoryUser } from '../../connectors/types.ts';
import type { Queryable } from '../db/tx.ts';
import { sourceTeammates } from '../teammates/queries.ts';

/**
 * `written`: the page's users the directory page wrote, with their teammates (src/sync/write.ts);
 * the teammates of the others are those of their sources, if they have one.
 */
export async function recordDirectoryPhotos(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
  users: readonly DirectoryUser[],
  written: ReadonlyMap<string, string>,
): Promise<void> {
  const listed = users.filter((u) => !u.removed);
  const others = listed.filter((u) => !written.has(u.externalId)).map((u) => u.externalId);
  const teammateOf = others.length ? new Map([...written, ...(await sourceTeammates(db, workspaceId, integrationId, others))]) : written;
  const withPhoto: { u: DirectoryUser; teammateId: string }[] = [];
  const without: { u: DirectoryUser; teammateId: string }[] = [];
  // Users the page did not store (no email, duplicate address) and that have no source are left out.
  for (const u of listed) {
    const teammateId = teammateOf.get(u.externalId);
    if (teammateId !== undefined) (u.photo?.url || u.photo?.etag ? withPhoto : without).push({ u, teammateId });
  }
  if (withPhoto.length) {
    await db.query(
      `insert into teammate_photos (workspace_id, integration_id, external_id, teammate_id, photo_url, photo_etag)
       select $1, $2, x.ext, x.teammate_id, x.url, x.etag
         from unnest($3::text[], $4::uuid[], $5::text[], $6::text[]) x(ext, teammate_id, url, etag)
       on conflict (integration_id, external_id) do update
          set teammate_id = excluded.teammate_id, photo_url = excluded.photo_url, photo_etag = excluded.photo_etag
        where (teammate_photos.teammate_id, teammate_photos.photo_url, teammate_photos.photo_etag)
              is distinct from (excluded.teammate_id, excluded.photo_url, excluded.photo_etag)`,
      [
        workspaceId,
        integrationId,
        withPhoto.map((p) => p.u.externalId),
        withPhoto.map((p) => p.teammateId),
        withPhoto.map((p) => p.u.photo!.url ?? null),
        withPhoto.map((p) => p.u.photo!.etag ?? null),
      ],
    );
  }
  // A user without a photo has a row only if a photo went away, for the photo sync to clear it;
  // one the directory never showed a photo for has nothing to fetch or clear, and gets no row.
  if (without.length) {
    await db.query(
      `update teammate_photos tp set photo_url = null, photo_etag = null, teammate_id = x.teammate_id
         from unnest($3::text[], $4::uuid[]) x(ext, teammate_id)
        where tp.workspace_id = $1 and tp.integration_id = $2 and tp.external_id = x.ext
          and (tp.photo_url, tp.photo_etag, tp.teammate_id) is distinct from (null::text, null::text, x.teammate_id)`,
      [workspaceId, integrationId, without.map((p) => p.u.externalId), without.map((p) => p.teammateId)],
    );
  }
}

/**
 * Records that a user's photo was fetched at `ref` (its etag or URL). `asset`: the stored image,
 * null when the user has no photo, undefined to keep the current one (unchanged or rejected).
 */
export async function recordPhotoFetched(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
  externalId: string,
  ref: string | null,
  asset: { id: string; sha256: string } | null | undefined,
): Promise<void> {
  await db.query(
    `update teammate_photos set fetched_ref = $4, fetched_at = now(),
            asset_id = case when $5 then $6::uuid else asset_id end,
            fetched_sha256 = case when $5 then $7 else fetched_sha256 end
      where workspace_id = $1 and integration_id = $2 and external_id = $3`,
    [workspaceId, integrationId, externalId, ref, asset !== undefined, asset?.id ?? null, asset?.sha256 ?? null],
  );
}
