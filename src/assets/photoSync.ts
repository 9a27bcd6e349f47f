/**
 * The photo sync of one `assets` integration: copies each teammate's directory photo into an asset
 * and points every photo smart field at the asset's public URL.
 *
 *   teammate_photos (listed by directory syncs of the same provider kind)
 *     -> candidates: listed reference (etag, else URL) differs from the one last fetched,
 *        or, for providers that list no photo version (Graph), the last check is older than a week
 *     -> fetch through the PhotoSource, PHOTO_CONCURRENCY at a time, PHOTO_BATCH per transaction
 *     -> null: no photo (not an error); too large, not PNG/JPEG/GIF/WebP, over MAX_INPUT_PIXELS, or
 *        refused by the source (a URL off the provider's image hosts or at a private address):
 *        rejected and counted; a WebP converted, a photo over MAX_STORED_SIDE resized (convert.ts);
 *        same sha256 as last time: unchanged; else an asset, deduplicated by sha256
 *     -> photo smart fields (kind `image`, mapped to this integration with attribute `photo`) get
 *        the public URL; teammates whose value changed get their mailboxes reinstalled, in the
 *        same transaction
 *
 * Memory stays bounded by PHOTO_BATCH images of at most MAX_ASSET_BYTES each.
 */
import pLimit from 'p-limit';
import type { Logger } from 'pino';
import { capabilitiesOf } from '../../connectors/registry.ts';
import type { PhotoSource } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx, type Queryable } from '../db/tx.ts';
import { requestTeammateInstalls } from '../jobs/triggers.ts';
import { buildConnector, getIntegration, markAccessLost } from '../integrations/integrations.ts';
import { AccessLostError, InvalidResponseError } from '../../connectors/types.ts';
import { assetPublicUrl, checkImage, sha256Hex, upsertAsset } from './assets.ts';
import { recordPhotoFetched } from './directoryPhotos.ts';
import { prepareImage } from './convert.ts';
import { setPhotoValues, type PhotoFieldContext } from '../teammates/teammates.ts';
import { existingTeammateIds } from '../teammates/queries.ts';
import { integrationIdsOfKind } from '../integrations/queries.ts';
import { mappedFields } from '../db/smartFields.ts';

/** Photos downloaded at the same time. */
export const PHOTO_CONCURRENCY = 4;
/** Candidates fetched and written per transaction. */
export const PHOTO_BATCH = 16;
/** The smart-field attribute that maps a field to the photo of an assets integration. */
export const PHOTO_ATTRIBUTE = 'photo';
/**
 * Providers whose listing carries no photo version (Graph lists a constant URL): their photos are
 * downloaded again when the last check is older than this, and kept only when the bytes changed.
 */
export const UNVERSIONED_RECHECK_MS = 7 * 24 * 3600 * 1000;

export interface PhotoSyncResult {
  status: 'succeeded' | 'skipped' | 'access_lost';
  /** Photos downloaded. */
  fetched: number;
  /** New or changed photos stored (or found already stored) as assets. */
  stored: number;
  /** Downloaded, but the same bytes as last time. */
  unchanged: number;
  /** Users the provider has no photo for. */
  missing: number;
  /** Downloads refused: too large or not an image. */
  rejected: number;
  /** Teammates whose photo smart fields changed (their installs were requested). */
  teammatesChanged: number;
}

/** A listed photo the photo sync fetches (photoSync.ts). */
export interface Candidate {
  integration_id: string;
  external_id: string;
  teammate_id: string;
  photo_url: string | null;
  photo_etag: string | null;
  fetched_sha256: string | null;
  /** What the listing says about the photo: its etag, else its URL. */
  ref: string | null;
}

type Outcome =
  | { kind: 'missing' }
  | { kind: 'rejected'; reason: string }
  | { kind: 'unchanged' }
  | { kind: 'image'; contentType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'; data: Buffer };

export async function syncPhotos(ctx: AppContext, workspaceId: string, integrationId: string, opts: { logger?: Logger } = {}): Promise<PhotoSyncResult> {
  const result: PhotoSyncResult = { status: 'succeeded', fetched: 0, stored: 0, unchanged: 0, missing: 0, rejected: 0, teammatesChanged: 0 };
  const integration = await getIntegration(ctx.pool, workspaceId, integrationId);
  const logger = (opts.logger ?? ctx.logger).child({ integrationId });
  if (!integration || integration.category !== 'assets' || integration.status !== 'active' || !integration.activated) {
    logger.info({ status: integration?.status ?? 'gone' }, 'photo sync skipped: the integration is not an active assets integration');
    return { ...result, status: 'skipped' };
  }
  const source = buildConnector<PhotoSource>(ctx, integration, logger);
  const fieldIds = (await mappedFields(ctx.pool, workspaceId, integrationId))
    .filter((f) => f.kind === 'image' && f.attribute === PHOTO_ATTRIBUTE)
    .map((f) => f.id);
  const recheckBefore = capabilitiesOf(integration.kind, 'assets').unversionedPhotos ? new Date(Date.now() - UNVERSIONED_RECHECK_MS) : null;
  const limit = pLimit(PHOTO_CONCURRENCY);
  const ctxFill: PhotoFieldContext = { workspaceId, integrationId, fieldIds };
  // The photo fields of these teammates (null: all) set from the photos the directories of this provider kind listed.
  const fillPhotoFields = async (client: Queryable, directories: readonly string[], teammateIds: string[] | null) =>
    fieldIds.length ? setPhotoValues(client, ctxFill, await fetchedPhotos(client, workspaceId, directories, teammateIds, ctx.config.PUBLIC_BASE_URL)) : [];

  let after: [string, string] = ['00000000-0000-0000-0000-000000000000', ''];
  for (;;) {
    const directories = await integrationIdsOfKind(ctx.pool, workspaceId, integration.kind, 'teammates');
    const listed = await photosToFetch(ctx.pool, workspaceId, directories, after, recheckBefore, PHOTO_BATCH);
    if (!listed.length) break;
    after = [listed.at(-1)!.integration_id, listed.at(-1)!.external_id];
    // The photos of teammates removed since they were listed are not fetched.
    const live = await existingTeammateIds(ctx.pool, workspaceId, [...new Set(listed.map((c) => c.teammate_id))]);
    const batch = listed.filter((c) => live.has(c.teammate_id));
    if (!batch.length) continue;

    let outcomes: Outcome[];
    try {
      outcomes = await Promise.all(batch.map((c) => limit(() => fetchOne(source, c, result))));
    } catch (err) {
      if (!(err instanceof AccessLostError)) throw err;
      await markAccessLost(ctx, ctx.pool, integration, err.message);
      logger.warn({ err: err.message }, 'photo sync stopped: access lost');
      return { ...result, status: 'access_lost' };
    }
    await withTx(ctx.pool, async (client) => {
      for (const [i, c] of batch.entries()) {
        const o = outcomes[i]!;
        let asset: { id: string; sha256: string } | null | undefined; // undefined: keep the current asset
        if (o.kind === 'missing') asset = null;
        else if (o.kind === 'rejected') logger.warn({ externalId: c.external_id, reason: o.reason }, 'directory photo rejected');
        else if (o.kind === 'image') {
          asset = await upsertAsset(client, workspaceId, {
            name: `Photo ${c.external_id}`,
            role: 'profile_photo',
            contentType: o.contentType,
            data: o.data,
            filename: `photo-${c.external_id}`,
          });
          result.stored++;
        }
        await recordPhotoFetched(client, workspaceId, c.integration_id, c.external_id, c.ref, asset);
      }
      const changed = await fillPhotoFields(client, directories, [...new Set(batch.map((c) => c.teammate_id))]);
      result.teammatesChanged += changed.length;
      await requestTeammateInstalls(client, workspaceId, changed);
    });
  }

  // Fields created, remapped or cleared by hand since the photos were fetched.
  const directories = await integrationIdsOfKind(ctx.pool, workspaceId, integration.kind, 'teammates');
  await withTx(ctx.pool, async (client) => {
    const changed = await fillPhotoFields(client, directories, null);
    result.teammatesChanged += changed.length;
    await requestTeammateInstalls(client, workspaceId, changed);
  });
  logger.info(result, 'photo sync finished');
  return result;
}

async function fetchOne(source: PhotoSource, c: Candidate, result: PhotoSyncResult): Promise<Outcome> {
  if (c.ref === null) {
    result.missing++;
    return { kind: 'missing' };
  }
  let photo: Awaited<ReturnType<PhotoSource['fetchPhoto']>>;
  try {
    photo = await source.fetchPhoto({
      externalId: c.external_id,
      photo: { ...(c.photo_url ? { url: c.photo_url } : {}), ...(c.photo_etag ? { etag: c.photo_etag } : {}) },
    });
  } catch (err) {
    // A photo the source refuses (a URL on a host it does not fetch from, an answer it cannot read)
    // is that user's problem: it is rejected, and the other users' photos still sync.
    if (!(err instanceof InvalidResponseError)) throw err;
    result.rejected++;
    return { kind: 'rejected', reason: err.message };
  }
  if (photo === null) {
    result.missing++;
    return { kind: 'missing' };
  }
  result.fetched++;
  const check = checkImage(photo.data);
  if (!check.ok) {
    result.rejected++;
    return { kind: 'rejected', reason: `${check.reason} (${photo.contentType}, ${photo.data.length} bytes)` };
  }
  // Stored as every mail client shows it (a WebP converted, a large photo resized: convert.ts).
  const image = await prepareImage(photo.data, check.contentType);
  if (!image.ok) {
    result.rejected++;
    return { kind: 'rejected', reason: `${image.reason}: ${image.message}` };
  }
  if (c.fetched_sha256 !== null && sha256Hex(image.data) === c.fetched_sha256) {
    result.unchanged++;
    return { kind: 'unchanged' };
  }
  return { kind: 'image', contentType: image.contentType, data: image.data };
}

/**
 * The photo sync's work: up to `limit` listed photos of the directory integrations `directories`,
 * after `after` (integration id, external id) in that order, whose reference differs from the one
 * last fetched, that were never fetched, or (`recheckBefore`) last fetched before it.
 */
async function photosToFetch(
  db: Queryable,
  workspaceId: string,
  directories: readonly string[],
  after: readonly [string, string],
  recheckBefore: Date | null,
  limit: number,
): Promise<Candidate[]> {
  const { rows } = await db.query<Candidate>(
    `select tp.integration_id, tp.external_id, tp.teammate_id, tp.photo_url, tp.photo_etag, tp.fetched_sha256,
            coalesce(tp.photo_etag, tp.photo_url) as ref
       from teammate_photos tp
      where tp.workspace_id = $1 and tp.integration_id = any($2::uuid[])
        and (tp.integration_id, tp.external_id) > ($3::uuid, $4::text)
        and (coalesce(tp.photo_etag, tp.photo_url) is distinct from tp.fetched_ref
             or tp.fetched_at is null
             or ($5::timestamptz is not null and tp.photo_url is not null and tp.fetched_at < $5::timestamptz))
      order by tp.integration_id, tp.external_id
      limit $6`,
    [workspaceId, directories, after[0], after[1], recheckBefore, limit],
  );
  return rows;
}

/**
 * Each teammate's fetched photo from the directory integrations `directories` (of the given
 * teammates; null: all), as the public URL of its asset, null where the last fetch found none: the
 * stored one first, then the latest fetched.
 */
async function fetchedPhotos(
  db: Queryable,
  workspaceId: string,
  directories: readonly string[],
  teammateIds: string[] | null,
  publicBaseUrl: string,
): Promise<{ teammateId: string; url: string | null }[]> {
  const { rows } = await db.query<{ teammate_id: string; public_token: string | null }>(
    `select distinct on (tp.teammate_id) tp.teammate_id, a.public_token
       from teammate_photos tp
       left join assets a on a.workspace_id = tp.workspace_id and a.id = tp.asset_id
      where tp.workspace_id = $1 and tp.integration_id = any($2::uuid[]) and tp.fetched_at is not null
        and ($3::uuid[] is null or tp.teammate_id = any($3::uuid[]))
      order by tp.teammate_id, (a.id is null), tp.fetched_at desc`,
    [workspaceId, directories, teammateIds],
  );
  return rows.map((r) => ({ teammateId: r.teammate_id, url: r.public_token === null ? null : assetPublicUrl(publicBaseUrl, r.public_token) }));
}
