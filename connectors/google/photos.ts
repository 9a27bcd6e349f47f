/**
 * Google Workspace photo source (category `assets`): the user's directory photo from
 * `users.photos.get`.
 *
 * Google sends the image as "web-safe base64": `-` for `+`, `_` for `/`, and `*` or `.` where
 * standard base64 has `=` padding. `mimeType` is either a MIME type or one of the names JPEG,
 * PNG, GIF, BMP, TIFF; when it is missing or unknown, the type is read from the image's first
 * bytes. A 404 means the user has no photo. A user whose listing had no thumbnail
 * (`photo: null`) has none either, and no call is made.
 */
import { admin, type admin_directory_v1 } from '@googleapis/admin';
import { definePhotoSource, parseProvider, type ConnectorContext, type Photo, type PhotoSource, type DirectoryUser } from '../types.ts';
import { adminAuthClient, credentialSecrets, googleCredentialsSchema, secretRedactor, type GoogleCredentials, type Redactor } from './auth.ts';
import { apiOptions, googleConfigSchema, type GoogleConfig } from './config.ts';
import { isNotFound, toConnectorError } from './errors.ts';
import { GoogleUserPhoto } from './schemas.ts';

export const PHOTO_SCOPES = ['https://www.googleapis.com/auth/admin.directory.user.readonly'] as const;

const NAMED_TYPES: Record<string, string> = {
  JPEG: 'image/jpeg',
  JPG: 'image/jpeg',
  PNG: 'image/png',
  GIF: 'image/gif',
  BMP: 'image/bmp',
  TIFF: 'image/tiff',
};

/** Decodes Google's web-safe base64 (either padding convention). */
export function decodeWebSafeBase64(data: string): Buffer {
  const standard = data.replace(/-/g, '+').replace(/_/g, '/').replace(/[*.]/g, '=').replace(/\s+/g, '');
  return Buffer.from(standard, 'base64');
}

function sniff(data: Buffer): string | undefined {
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (data.subarray(0, 4).toString('latin1') === 'GIF8') return 'image/gif';
  if (data.subarray(0, 2).toString('latin1') === 'BM') return 'image/bmp';
  const tiff = data.subarray(0, 4).toString('latin1');
  if (tiff === 'II*\0' || tiff === 'MM\0*') return 'image/tiff';
  return undefined;
}

/** The photo's MIME type, from Google's mimeType or the image bytes. */
export function photoContentType(mimeType: string | null | undefined, data: Buffer): string {
  const m = mimeType?.trim();
  if (m && m.includes('/')) return m.toLowerCase();
  if (m && NAMED_TYPES[m.toUpperCase()]) return NAMED_TYPES[m.toUpperCase()]!;
  return sniff(data) ?? 'application/octet-stream';
}

type Ctx = ConnectorContext<GoogleConfig, GoogleCredentials>;

export class GooglePhotoSource implements PhotoSource {
  readonly #api: admin_directory_v1.Admin;
  readonly #redact: Redactor;

  constructor(ctx: Ctx) {
    this.#redact = secretRedactor(credentialSecrets(ctx.credentials));
    const auth = adminAuthClient(ctx.credentials, PHOTO_SCOPES, {
      tokenUrl: ctx.config.token_url,
      timeoutMs: ctx.config.request_timeout_ms,
      signal: ctx.signal,
    });
    this.#api = admin({ version: 'directory_v1', auth, ...apiOptions(ctx.config) });
  }

  async fetchPhoto(user: { externalId: string; photo: DirectoryUser['photo'] }): Promise<Photo | null> {
    if (user.photo === null) return null;
    let data: unknown;
    try {
      // https://developers.google.com/workspace/admin/directory/reference/rest/v1/users.photos/get
      const res = await this.#api.users.photos.get({ userKey: user.externalId });
      data = res.data;
    } catch (err) {
      // No photo is an answer, not a failure.
      if (isNotFound(err, '/photos/')) return null;
      throw toConnectorError(err, { site: 'photo', what: 'users.photos.get', redact: this.#redact });
    }
    const photo = parseProvider(GoogleUserPhoto, data, 'google users.photos.get');
    const bytes = decodeWebSafeBase64(photo.photoData);
    if (bytes.length === 0) return null;
    const out: Photo = { contentType: photoContentType(photo.mimeType, bytes), data: bytes };
    // The listing's thumbnailPhotoEtag is what the engine compares; keep the two in step.
    const etag = user.photo.etag ?? photo.etag;
    if (etag) out.etag = etag;
    return out;
  }
}

export const googlePhotoSource = definePhotoSource({
  kind: 'google_workspace',
  scopes: PHOTO_SCOPES,
  configSchema: googleConfigSchema,
  credentialsSchema: googleCredentialsSchema,
  create: (ctx) => new GooglePhotoSource(ctx),
});
