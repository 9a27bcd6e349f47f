/**
 * Assets: images stored in Postgres, one row per distinct content per workspace (sha256), read by
 * anyone holding their unguessable public token at `${PUBLIC_BASE_URL}/assets/{public_token}`.
 *
 * Only PNG, JPEG, GIF and WebP are stored, up to MAX_ASSET_BYTES; the type is read from the bytes,
 * never taken from the provider's Content-Type.
 */
import crypto from 'node:crypto';
import type { Queryable } from '../db/tx.ts';

/** Largest image stored (5 MiB). A signature image is a few kilobytes to a few hundred. */
export const MAX_ASSET_BYTES = 5 * 1024 * 1024;

export type AssetRole = 'company_logo' | 'profile_photo' | 'banner' | 'image';
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

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
