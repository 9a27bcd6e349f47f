/**
 * Assets: images stored in Postgres, one row per distinct content per workspace (sha256), read by
 * anyone holding their unguessable public token at `${PUBLIC_BASE_URL}/assets/{public_token}`.
 * This module owns the `assets` table: the photo sync and the API (POST/PATCH/GET/DELETE
 * /v1/assets) both write through it.
 *
 * Only PNG, JPEG, GIF and WebP are stored, up to MAX_ASSET_BYTES; the type is read from the bytes,
 * never taken from the provider's Content-Type or the file name. SVG is refused: Gmail and Outlook do
 * not display SVG images in mail, and an SVG is a document that can carry scripts and external
 * references, so a signature with one would show a broken image at best.
 *
 * Derived on read (src/assets/assetsInUse.ts, the read model of where each asset is in use): `signature_template_count` (signatures whose published or draft
 * tree, or a variant's, shows the asset through an `assetUuid` token), `in_use` (such a signature, a
 * campaign's content, or a teammate's directory photo), and `role`: `profile_photo` for photos
 * copied from a directory, else `company_logo` when a signature shows it, `banner` when only campaigns
 * do, `image` otherwise.
 */
import crypto from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import type { Queryable } from '../db/tx.ts';
import { getAsset, type AssetRole, type ImageType } from './assetsInUse.ts';

/** Largest image stored (5 MiB). A signature image is a few kilobytes to a few hundred. */
export const MAX_ASSET_BYTES = 5 * 1024 * 1024;

const EXTENSIONS: Record<ImageType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** The image type read from the first bytes, or null when the bytes are not one we store. */
export function sniffImageType(data: Buffer): ImageType | null {
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data.length >= 6 && (data.subarray(0, 6).toString('latin1') === 'GIF87a' || data.subarray(0, 6).toString('latin1') === 'GIF89a')) return 'image/gif';
  if (data.length >= 12 && data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return null;
}

export type ImageCheck = { ok: true; contentType: ImageType } | { ok: false; reason: 'too_large' | 'not_an_image' };

export function checkImage(data: Buffer): ImageCheck {
  if (data.length > MAX_ASSET_BYTES) return { ok: false, reason: 'too_large' };
  const type = sniffImageType(data);
  return type ? { ok: true, contentType: type } : { ok: false, reason: 'not_an_image' };
}

export function sha256Hex(data: Buffer): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

export function newPublicToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

export function assetPublicUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/assets/${token}`;
}

export interface NewAsset {
  name: string;
  role: AssetRole;
  contentType: ImageType;
  data: Buffer;
  /** Without an extension, one matching the type is added. */
  filename: string;
}

export interface StoredAsset {
  id: string;
  public_token: string;
  sha256: string;
}

/**
 * Stores the image unless the workspace already has the same bytes; either way returns the row.
 * One statement: concurrent writers of the same content meet on the (workspace_id, sha256) key.
 */
export async function upsertAsset(db: Queryable, workspaceId: string, a: NewAsset): Promise<StoredAsset> {
  const sha = sha256Hex(a.data);
  const filename = /\.[a-z0-9]{2,5}$/i.test(a.filename) ? a.filename : `${a.filename}.${EXTENSIONS[a.contentType]}`;
  const { rows } = await db.query<StoredAsset>(
    `insert into assets (workspace_id, name, role, content_type, byte_size, sha256, data, filename, public_token)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     on conflict (workspace_id, sha256) do update set sha256 = excluded.sha256
     returning id, public_token, sha256`,
    [workspaceId, a.name.slice(0, 200) || 'image', a.role, a.contentType, a.data.length, sha, a.data, filename.slice(0, 255), newPublicToken()],
  );
  return rows[0]!;
}

/** Whether the bytes are an SVG document (text, possibly after a BOM, an XML declaration, comments or a doctype). */
export function looksLikeSvg(data: Buffer): boolean {
  const head = data
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  const rest = head.replace(/^(\s|<\?xml[^>]*>|<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)*/i, '');
  return /^<svg[\s>]/i.test(rest);
}

export type UploadCheck = { ok: true; contentType: ImageType } | { ok: false; reason: 'too_large' | 'svg' | 'unsupported' | 'empty'; detected?: string };

/**
 * The type of an uploaded file, read from its bytes by `file-type` (the maintained magic-number
 * library, which knows far more formats than we accept, so the answer can name what was sent).
 */
export async function checkUpload(data: Buffer): Promise<UploadCheck> {
  if (data.length === 0) return { ok: false, reason: 'empty' };
  if (data.length > MAX_ASSET_BYTES) return { ok: false, reason: 'too_large' };
  const found = await fileTypeFromBuffer(data);
  if (found && (ACCEPTED as readonly string[]).includes(found.mime)) return { ok: true, contentType: found.mime as ImageType };
  if ((!found || found.mime === 'application/xml' || found.mime === 'image/svg+xml') && looksLikeSvg(data))
    return { ok: false, reason: 'svg', detected: 'image/svg+xml' };
  return found ? { ok: false, reason: 'unsupported', detected: found.mime } : { ok: false, reason: 'unsupported' };
}

export const ACCEPTED = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const satisfies readonly ImageType[];

/** Stores an uploaded image, or finds the workspace's asset with the same bytes; `created` says which. */
export async function createAsset(db: Queryable, workspaceId: string, a: Omit<NewAsset, 'role'>): Promise<{ id: string; created: boolean }> {
  const before = await db.query<{ id: string }>('select id from assets where workspace_id = $1 and sha256 = $2', [workspaceId, sha256Hex(a.data)]);
  if (before.rows[0]) return { id: before.rows[0].id, created: false };
  const stored = await upsertAsset(db, workspaceId, { ...a, role: 'image' });
  return { id: stored.id, created: true };
}

export async function renameAsset(db: Queryable, workspaceId: string, id: string, name: string): Promise<boolean> {
  const { rowCount } = await db.query('update assets set name = $3 where workspace_id = $1 and id = $2', [workspaceId, id, name]);
  return (rowCount ?? 0) > 0;
}

/** Deletes an asset nothing uses; answers what stopped it otherwise. */
export async function deleteAsset(db: Queryable, workspaceId: string, id: string): Promise<'deleted' | 'not_found' | 'in_use'> {
  const found = await getAsset(db, workspaceId, id);
  if (!found) return 'not_found';
  if (found.in_use) return 'in_use';
  await db.query('delete from assets where workspace_id = $1 and id = $2', [workspaceId, id]);
  return 'deleted';
}

/** The existing assets of the workspace among `ids` (lowercased), for validating trees that name them. */
const uuidsOf = (ids: readonly string[]) =>
  ids.map((i) => i.toLowerCase()).filter((i) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(i));

export async function existingAssetIds(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
  const uuids = uuidsOf(ids);
  if (!uuids.length) return new Set();
  const { rows } = await db.query<{ id: string }>('select id from assets where workspace_id = $1 and id = any($2::uuid[])', [workspaceId, uuids]);
  return new Set(rows.map((r) => r.id));
}

/** Public URLs of the workspace's assets among `ids`, for rendering assetUuid tokens. */
export async function assetRefs(db: Queryable, workspaceId: string, ids: readonly string[], publicBaseUrl: string): Promise<Map<string, { url: string }>> {
  const uuids = uuidsOf(ids);
  if (!uuids.length) return new Map();
  const { rows } = await db.query<{ id: string; public_token: string }>(
    'select id, public_token from assets where workspace_id = $1 and id = any($2::uuid[])',
    [workspaceId, uuids],
  );
  return new Map(rows.map((r) => [r.id, { url: assetPublicUrl(publicBaseUrl, r.public_token) }]));
}

/** An asset's bytes by its public token (the public /assets/{token} route). */
export async function assetByToken(
  db: Queryable,
  token: string,
): Promise<{ content_type: string; data: Buffer; sha256: string; filename: string | null } | undefined> {
  const { rows } = await db.query<{ content_type: string; data: Buffer; sha256: string; filename: string | null }>(
    'select content_type, data, sha256, filename from assets where public_token = $1',
    [token],
  );
  return rows[0];
}

/** An asset's bytes by workspace and public token (tracked images). */
export async function workspaceAssetByToken(db: Queryable, workspaceId: string, token: string): Promise<{ content_type: string; data: Buffer } | undefined> {
  const { rows } = await db.query<{ content_type: string; data: Buffer }>(
    'select content_type, data from assets where workspace_id = $1 and public_token = $2',
    [workspaceId, token],
  );
  return rows[0];
}

/**
 * The workspace's assets an HTML page shows (`src` at `${publicBaseUrl}/assets/{token}`), by that
 * URL, with their bytes: what the PNG preview serves the page so the logo and photos load offline.
 */
export async function assetsShownIn(
  db: Queryable,
  workspaceId: string,
  html: string,
  publicBaseUrl: string,
): Promise<Map<string, { contentType: string; data: Buffer }>> {
  const prefix = assetPublicUrl(publicBaseUrl, '');
  const urls = new Set([...html.matchAll(/\ssrc="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&')).filter((u) => u.startsWith(prefix)));
  const { rows } = await db.query<{ public_token: string; content_type: string; data: Buffer }>(
    'select public_token, content_type, data from assets where workspace_id = $1 and public_token = any($2::text[])',
    [workspaceId, [...urls].map((u) => u.slice(prefix.length))],
  );
  return new Map(rows.map((r) => [prefix + r.public_token, { contentType: r.content_type, data: r.data }]));
}
