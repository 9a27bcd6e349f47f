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
import { withTx } from '../db/tx.ts';
import { requestTeammateInstalls } from '../jobs/triggers.ts';
import { buildConnector, getIntegration, markAccessLost } from '../integrations/repository.ts';
import { AccessLostError, InvalidResponseError } from '../../connectors/types.ts';
import { checkImage, sha256Hex, upsertAsset } from './store.ts';
import { recordPhotoFetched } from './directoryPhotos.ts';
import { prepareImage } from './convert.ts';
import { setPhotoValues, type PhotoFieldContext } from '../teammates/teammates.ts';

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

interface Candidate {
  integration_id: string;
  external_id: string;
  teammate_id: string;
  photo_url: string | null;
  photo_etag: string | null;
  fetched_sha256: string | null;
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
  const fieldIds = (
    await ctx.pool.query<{ id: string }>(
      `select id from smart_fields where workspace_id = $1 and integration_id = $2 and kind = 'image' and integration_attribute = $3`,
      [workspaceId, integrationId, PHOTO_ATTRIBUTE],
    )
  ).rows.map((r) => r.id);
  const recheckBefore = capabilitiesOf(integration.kind, 'assets').unversionedPhotos ? new Date(Date.now() - UNVERSIONED_RECHECK_MS) : null;
  const limit = pLimit(PHOTO_CONCURRENCY);
  const ctxFill: PhotoFieldContext = { workspaceId, integrationId, kind: integration.kind, fieldIds, baseUrl: ctx.config.PUBLIC_BASE_URL };

  let after: [string, string] = ['00000000-0000-0000-0000-000000000000', ''];
  for (;;) {
    const { rows: batch } = await ctx.pool.query<Candidate>(
      `select tp.integration_id, tp.external_id, tp.teammate_id, tp.photo_url, tp.photo_etag, tp.fetched_sha256,
              coalesce(tp.photo_etag, tp.photo_url) as ref
         from teammate_photos tp
         join integrations d on d.workspace_id = tp.workspace_id and d.id = tp.integration_id
         join teammates t on t.workspace_id = tp.workspace_id and t.id = tp.teammate_id
        where tp.workspace_id = $1 and d.kind = $2 and d.category = 'teammates' and t.deleted_at is null
          and (tp.integration_id, tp.external_id) > ($3::uuid, $4::text)
          and (coalesce(tp.photo_etag, tp.photo_url) is distinct from tp.fetched_ref
               or tp.fetched_at is null
               or ($5::timestamptz is not null and tp.photo_url is not null and tp.fetched_at < $5::timestamptz))
        order by tp.integration_id, tp.external_id
        limit $6`,
      [workspaceId, integration.kind, after[0], after[1], recheckBefore, PHOTO_BATCH],
    );
    if (!batch.length) break;
    after = [batch.at(-1)!.integration_id, batch.at(-1)!.external_id];

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
          asset = await upsertAsset(client, workspaceId, { name: `Photo ${c.external_id}`, role: 'profile_photo', contentType: o.contentType, data: o.data, filename: `photo-${c.external_id}` });
          result.stored++;
        }
        await recordPhotoFetched(client, workspaceId, c.integration_id, c.external_id, c.ref, asset);
      }
      const changed = await setPhotoValues(client, ctxFill, [...new Set(batch.map((c) => c.teammate_id))]);
      result.teammatesChanged += changed.length;
      await requestTeammateInstalls(client, workspaceId, changed);
    });
  }

  // Fields created, remapped or cleared by hand since the photos were fetched.
  await withTx(ctx.pool, async (client) => {
    const changed = await setPhotoValues(client, ctxFill, null);
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
