/**
 * Assets (spec 2.5, 4.6): images a content tree can show (`assetUuid` tokens), served to mail
 * clients at `file.url` (GET /assets/{token}, no key).
 *
 *   GET    /v1/assets          paged, newest first
 *   GET    /v1/assets/{id}
 *   POST   /v1/assets          {asset: {file_base64, filename, name?} | {source_url, name?}} -> 201, or 200
 *                              with the existing asset when the workspace already has these bytes
 *   PATCH  /v1/assets/{id}     {asset: {name}} renames
 *   DELETE /v1/assets/{id}     204; refused while in use (422 asset_in_use, remediation remove_asset_references)
 *
 * Accepted: PNG, JPEG, GIF and WebP up to 5 MiB, the type read from the bytes; SVG is refused
 * (src/assets/assets.ts says why). Before it is stored, a WebP is converted and a large image resized
 * (src/assets/convert.ts); POST answers `conversion` beside `data` (null when stored as sent), and a
 * canvas over MAX_INPUT_PIXELS is too_big, bytes that do not decode invalid_image. `source_url` is fetched under the webhook URL rules
 * (src/assets/fetchUrl.ts). Each refusal is a 422 detail on the field: `asset.file_base64` or
 * `asset.source_url` with invalid_base64, too_big, unsupported_type, unsafe_url or fetch_failed;
 * A `fetch_failed` always carries the same message (the reason is logged): a connection refused,
 * reset or a TLS error would otherwise tell which ports answer at an address.
 * `asset.filename` required; `asset` with one_of_required or mutually_exclusive.
 */
import { dashboardUrl } from '../../dashboard.ts';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { fetchSourceUrl, SourceUrlError } from '../../assets/fetchUrl.ts';
import { filenameFor, MAX_INPUT_PIXELS, MAX_STORED_SIDE, prepareImage } from '../../assets/convert.ts';
import { ACCEPTED, assetPublicUrl, checkUpload, createAsset, deleteAsset, MAX_ASSET_BYTES, renameAsset } from '../../assets/assets.ts';
import { getAsset, listAssets, type AssetRow } from '../../assets/assetsInUse.ts';
import { pageParams } from '../pagination.ts';
import { withTx } from '../../db/tx.ts';
import { audited, auditWrite } from './audit.ts';
import { ApiError, detail } from '../../errors.ts';
import { dataOf, errors, IdParams, isoRequired, NoContent, PageQuery, pageOf, paginate, pathId, Timestamp } from './schemas.ts';

/** Base64 of the largest file, with room for the JSON around it. */
export const ASSET_BODY_LIMIT = Math.ceil((MAX_ASSET_BYTES * 4) / 3) + 64 * 1024;

const FileInfo = z.object({ url: z.string(), filename: z.string(), content_type: z.string(), byte_size: z.int() }).meta({ id: 'FileInfo' });

export const Asset = z
  .object({
    id: z.string(),
    name: z.string(),
    role: z
      .enum(['company_logo', 'profile_photo', 'banner', 'image'])
      .describe('Derived: profile_photo for directory photos, company_logo when a signature shows it, banner when only campaigns do, else image.'),
    in_use: z.boolean().describe('A signature, a campaign or a teammate photo uses it.'),
    signature_template_count: z.int().describe("Signatures whose published or draft content (or a variant's) shows it."),
    file: FileInfo,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Asset' });

const name = z.string().trim().min(1).max(200);
const AssetCreate = z.strictObject({
  asset: z.strictObject({
    file_base64: z.string().optional().describe(`The file, base64-encoded; with filename. PNG, JPEG, GIF or WebP, at most ${MAX_ASSET_BYTES} bytes.`),
    filename: z.string().trim().min(1).max(255).optional(),
    source_url: z.string().max(2048).optional().describe('Or: an https URL at a public address to fetch the file from.'),
    name: name.optional().describe('Default: the file name without its extension.'),
  }),
});
const Conversion = z
  .object({
    from: z.string().describe('The type sent.'),
    to: z.string().describe('The type stored: PNG (transparency kept) or JPEG for a WebP, else the type sent.'),
    width: z.int(),
    height: z.int(),
    bytes_before: z.int(),
    bytes_after: z.int(),
    message: z.string().describe('What was done and why, in plain words.'),
  })
  .nullable()
  .describe(
    `Beyond the spec: what was done to the file before it was stored (WebP converted, sides over ${MAX_STORED_SIDE} px resized); null when it was stored as sent.`,
  )
  .meta({ id: 'AssetConversion' });
const AssetCreated = dataOf(Asset).extend({ conversion: Conversion });

const AssetUpdate = z.strictObject({ asset: z.strictObject({ name }) });
type CreateBody = z.infer<typeof AssetCreate>['asset'];

/** The one answer to every source_url that gave no file (the reason is logged, not told). */
export const FETCH_FAILED_MESSAGE = 'The file could not be fetched from source_url: check that the URL answers with the image.';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export function assetView(r: AssetRow, publicBaseUrl: string): z.infer<typeof Asset> {
  return {
    id: r.id,
    name: r.name,
    role: r.role,
    in_use: r.in_use,
    signature_template_count: r.signature_template_count,
    file: { url: assetPublicUrl(publicBaseUrl, r.public_token), filename: r.filename ?? r.name, content_type: r.content_type, byte_size: r.byte_size },
    created_at: isoRequired(r.created_at),
    updated_at: isoRequired(r.updated_at),
  };
}

/** The file a create body names: decoded from base64 or downloaded; 422 naming the field otherwise. */
async function fileOf(a: CreateBody, app: AppContext, log: FastifyBaseLogger): Promise<{ data: Buffer; filename: string; field: string }> {
  if ((a.file_base64 === undefined) === (a.source_url === undefined)) {
    const both = a.file_base64 !== undefined;
    throw ApiError.validation([
      both
        ? detail('asset', 'mutually_exclusive', 'Send either file_base64 (with filename) or source_url, not both.', { allowed: ['file_base64', 'source_url'] })
        : detail('asset', 'one_of_required', 'Send file_base64 (with filename) or source_url.', { missing: ['file_base64', 'source_url'] }),
    ]);
  }
  if (a.file_base64 !== undefined) {
    const b64 = a.file_base64.replace(/\s+/g, '');
    const details = [];
    if (!b64 || !BASE64.test(b64) || b64.length % 4 === 1) details.push(detail('asset.file_base64', 'invalid_base64', 'file_base64 is not base64.'));
    if (a.filename === undefined)
      details.push(detail('asset.filename', 'required', 'A file sent as file_base64 needs its filename.', { missing: ['filename'] }));
    if (details.length) throw ApiError.validation(details);
    return { data: Buffer.from(b64, 'base64'), filename: a.filename!, field: 'asset.file_base64' };
  }
  try {
    const { data, url } = await fetchSourceUrl(a.source_url!, { allowInsecure: app.config.ALLOW_INSECURE_OUTBOUND_URLS });
    const last = decodeURIComponent(url.pathname.split('/').pop() ?? '').replace(/[^\w.-]+/g, '_');
    return { data, filename: a.filename ?? (last || 'image'), field: 'asset.source_url' };
  } catch (err) {
    if (!(err instanceof SourceUrlError)) throw err;
    const code = err.code === 'too_large' ? 'too_big' : err.code;
    // Why a fetch failed (refused, reset, a TLS record error, an HTTP status) tells a caller which
    // ports answer at an address: it is logged, and the caller gets one answer for all of them.
    if (code === 'fetch_failed') {
      log.warn({ err, source_url: a.source_url }, 'asset source_url fetch failed');
      throw ApiError.validation([detail('asset.source_url', code, FETCH_FAILED_MESSAGE)]);
    }
    throw ApiError.validation([detail('asset.source_url', code, err.message, code === 'too_big' ? { allowed: [{ maximum: MAX_ASSET_BYTES }] } : {})]);
  }
}

/** The image as it will be stored (src/assets/convert.ts), or a 422 naming the field. */
async function storedImage(file: { data: Buffer; filename: string; field: string }) {
  const check = await checkUpload(file.data);
  const allowed = [...ACCEPTED];
  if (!check.ok) {
    const why = {
      empty: detail(file.field, 'too_small', 'The file is empty.'),
      too_large: detail(file.field, 'too_big', `The file is ${file.data.length} bytes; at most ${MAX_ASSET_BYTES} are accepted.`, {
        allowed: [{ maximum: MAX_ASSET_BYTES }],
      }),
      svg: detail(file.field, 'unsupported_type', 'SVG is not accepted: most mail clients (Gmail, Outlook) do not display SVG images. Send a PNG of it.', {
        allowed,
      }),
      unsupported: detail(
        file.field,
        'unsupported_type',
        `The file is ${check.detected ? `of type ${check.detected}` : 'not an image we recognise'}; send PNG, JPEG, GIF or WebP.`,
        { allowed },
      ),
    }[check.reason];
    throw ApiError.validation([why]);
  }
  const image = await prepareImage(file.data, check.contentType);
  if (!image.ok) {
    throw ApiError.validation([
      image.reason === 'too_many_pixels'
        ? detail(file.field, 'too_big', image.message, { allowed: [{ maximum_pixels: MAX_INPUT_PIXELS }] })
        : detail(file.field, 'invalid_image', image.message, { allowed }),
    ]);
  }
  const filename = image.conversion && image.contentType !== check.contentType ? filenameFor(file.filename, image.contentType) : file.filename;
  return { ...image, filename };
}

export function assetRoutes(v1: FastifyInstance, app: AppContext): void {
  const r = v1.withTypeProvider<ZodTypeProvider>();
  const tags = ['assets'];
  const view = (row: AssetRow) => assetView(row, app.config.PUBLIC_BASE_URL);
  const load = async (ws: string, id: string) => {
    const row = await getAsset(app.pool, ws, id);
    if (!row) throw ApiError.notFound('asset');
    return row;
  };

  r.get('/assets', { schema: { tags, summary: 'List assets', querystring: PageQuery, response: { 200: pageOf(Asset), ...errors(401, 422) } } }, async (req) => {
    const params = pageParams(req.query);
    const { rows, total } = await listAssets(app.pool, req.workspaceId, params.limit, params.offset);
    return paginate(rows.map(view), params, total);
  });

  r.get('/assets/:id', { schema: { tags, summary: 'Get an asset', params: IdParams, response: { 200: dataOf(Asset), ...errors(401, 404) } } }, async (req) => {
    return { data: view(await load(req.workspaceId, pathId(req.params.id, 'asset'))) };
  });

  r.post(
    '/assets',
    {
      bodyLimit: ASSET_BODY_LIMIT,
      // The server's handler states the general limit; this route's is larger. Anything else goes up to it.
      errorHandler: (err) => {
        if ((err as { code?: string }).code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw err;
        throw new ApiError(413, 'invalid_request_error', 'body_too_large', `Request bodies are limited to ${ASSET_BODY_LIMIT} bytes.`);
      },
      schema: {
        tags,
        summary: 'Upload an image (file_base64 or source_url)',
        body: AssetCreate,
        response: { 200: AssetCreated, 201: AssetCreated, ...errors(401, 422) },
      },
    },
    async (req, reply) => {
      const a = req.body.asset;
      const file = await fileOf(a, app, req.log);
      const image = await storedImage(file);
      const base = file.filename.replace(/\.[A-Za-z0-9]{1,5}$/, '') || 'image';
      const fields = { name: a.name ?? base, filename: image.filename, contentType: image.contentType, data: image.data };
      const stored = await audited(app, req, { action: 'asset.create', targetKind: 'asset' }, (c) => createAsset(c, req.workspaceId, fields));
      return reply.status(stored.created ? 201 : 200).send({ data: view(await load(req.workspaceId, stored.id)), conversion: image.conversion });
    },
  );

  r.patch(
    '/assets/:id',
    { schema: { tags, summary: 'Rename an asset', params: IdParams, body: AssetUpdate, response: { 200: dataOf(Asset), ...errors(401, 404, 422) } } },
    async (req) => {
      const id = pathId(req.params.id, 'asset');
      await audited(app, req, { action: 'asset.rename', targetKind: 'asset', target: id }, async (c) => {
        if (!(await renameAsset(c, req.workspaceId, id, req.body.asset.name))) throw ApiError.notFound('asset');
      });
      return { data: view(await load(req.workspaceId, id)) };
    },
  );

  r.delete(
    '/assets/:id',
    { schema: { tags, summary: 'Delete an asset nothing uses', params: IdParams, response: { 204: NoContent, ...errors(401, 404, 422) } } },
    async (req, reply) => {
      const id = pathId(req.params.id, 'asset');
      const outcome = await withTx(app.pool, async (c) => {
        const result = await deleteAsset(c, req.workspaceId, id);
        if (result === 'deleted') await auditWrite(c, req, { action: 'asset.delete', targetKind: 'asset', target: id });
        return result;
      });
      if (outcome === 'not_found') throw ApiError.notFound('asset');
      if (outcome === 'in_use') {
        throw new ApiError(422, 'invalid_request_error', 'asset_in_use', 'The asset is used by a signature, a campaign or a teammate photo.', {
          remediation: {
            action: 'remove_asset_references',
            dashboard_url: dashboardUrl(app.config.PUBLIC_BASE_URL, { page: 'assets' }),
            message: 'Remove the asset from the signatures and campaigns that show it (their draft and published content), then delete it.',
          },
        });
      }
      return reply.status(204).send(null);
    },
  );
}
