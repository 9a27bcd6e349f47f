import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { useNock } from '../helpers.ts';
import { decodeWebSafeBase64, googlePhotoSource, photoContentType } from '../../../connectors/google/photos.ts';
import { AccessLostError, RateLimitedError } from '../../../connectors/types.ts';
import { ADMIN_ORIGIN, apiError, countUnmatched, fixture, mockTokenExchange, serviceAccountKey, silentLogger } from './helpers.ts';

const USER_ID = '104318735627184620012';
const PHOTO_PATH = `/admin/directory/v1/users/${USER_ID}/photos/thumbnail`;
const LISTED_ETAG = '"Yu1r2J0SMwUrw-Gt5kXd0M5pH0E/3mFlH1wCjM6XLaJMkR5n_1YzUK0"';
const user = { externalId: USER_ID, photo: { url: 'https://lh3.googleusercontent.com/a-/ALV-UjX=s96-c', etag: LISTED_ETAG } };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function source() {
  const def = googlePhotoSource;
  return def.create({ config: def.configSchema.parse({}), credentials: def.credentialsSchema.parse(serviceAccountKey()), logger: silentLogger() });
}

useNock();

describe('Google photo source', () => {
  it('fetches users.photos.get and decodes Google’s web-safe base64', async () => {
    const recorded = fixture<{ photoData: string }>('users.photos.get.json');
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN).get(PHOTO_PATH).reply(200, recorded);
    const photo = await source().fetchPhoto(user);
    token.done();
    api.done();
    expect(photo).not.toBeNull();
    expect(photo!.contentType).toBe('image/png');
    expect(photo!.data.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(photo!.data).toEqual(Buffer.from(recorded.photoData.replace(/-/g, '+').replace(/_/g, '/').replace(/\*/g, '='), 'base64'));
    expect(photo!.etag).toBe(LISTED_ETAG);
  });

  it('answers null on 404 (no photo)', async () => {
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN)
      .get(PHOTO_PATH)
      .reply(404, apiError(404, 'Resource Not Found: userKey', 'notFound'));
    expect(await source().fetchPhoto(user)).toBeNull();
    token.done();
    api.done();
  });

  it('does not take a 404 from the token endpoint for "no photo"', async () => {
    const token = nock('https://sandbox.sigsync.test').post('/wrong/token').reply(404, 'Not Found');
    const def = googlePhotoSource;
    const src = def.create({
      config: def.configSchema.parse({ token_url: 'https://sandbox.sigsync.test/wrong/token' }),
      credentials: def.credentialsSchema.parse(serviceAccountKey()),
      logger: silentLogger(),
    });
    const err = await src.fetchPhoto(user).catch((e: unknown) => e);
    token.done();
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ code: 'access_lost', status: 404 });
  });

  it('makes no call for a user the listing showed without a photo', async () => {
    const unmatched = countUnmatched();
    try {
      expect(await source().fetchPhoto({ externalId: USER_ID, photo: null })).toBeNull();
      expect(unmatched.count).toBe(0);
    } finally {
      unmatched.stop();
    }
  });

  it('maps a missing scope to access_lost and 429 to rate_limited', async () => {
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN)
      .get(PHOTO_PATH)
      .reply(403, apiError(403, 'Request had insufficient authentication scopes.', 'insufficientPermissions', 'PERMISSION_DENIED'))
      .get(PHOTO_PATH)
      .reply(429, apiError(429, 'Rate Limit Exceeded', 'rateLimitExceeded'), { 'Retry-After': '2' });
    const src = source();
    const denied = await src.fetchPhoto(user).catch((e: unknown) => e);
    const limited = await src.fetchPhoto(user).catch((e: unknown) => e);
    token.done();
    api.done();
    expect(denied).toBeInstanceOf(AccessLostError);
    expect(denied).toMatchObject({ code: 'access_lost', status: 403, providerCode: 'insufficientPermissions' });
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 2000 });
  });

  it('decodes both padding conventions and reads named or missing MIME types', () => {
    const bytes = Buffer.from('any carnal pleasure?'); // standard base64 ends in one '=' of padding
    const std = bytes.toString('base64');
    expect(decodeWebSafeBase64(std.replace(/=/g, '*'))).toEqual(bytes);
    expect(decodeWebSafeBase64(std.replace(/=/g, '.'))).toEqual(bytes);
    expect(decodeWebSafeBase64(Buffer.from([0xfb, 0xff, 0xbf]).toString('base64url'))).toEqual(Buffer.from([0xfb, 0xff, 0xbf]));
    expect(photoContentType('JPEG', Buffer.alloc(0))).toBe('image/jpeg');
    expect(photoContentType('image/PNG', Buffer.alloc(0))).toBe('image/png');
    expect(photoContentType(undefined, Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(photoContentType(null, Buffer.from('plain text'))).toBe('application/octet-stream');
  });
});
