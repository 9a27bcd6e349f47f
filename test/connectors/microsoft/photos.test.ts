import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { microsoftPhotoSource } from '../../../connectors/microsoft/photos.ts';
import { MailboxError, type PhotoSource, RateLimitedError } from '../../../connectors/types.ts';
import { ACCESS_TOKEN, config, CREDENTIALS, GRAPH, graphErrorBody, tokenScope, uid } from './helpers.ts';

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0xff, 0xd9]);
const user = { externalId: uid(1), photo: { url: `${GRAPH}/v1.0/users/${uid(1)}/photo/$value` } };

function photos(): PhotoSource {
  return microsoftPhotoSource.create({ config: config(), credentials: CREDENTIALS, logger: captureLogger().logger });
}

useNock();

describe('Microsoft photo source', () => {
  it('downloads /users/{id}/photo/$value with its content type and etag', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .matchHeader('authorization', `Bearer ${ACCESS_TOKEN}`)
      .get(`/v1.0/users/${uid(1)}/photo/$value`)
      .reply(200, JPEG, { 'Content-Type': 'image/jpeg', ETag: 'W/"BA09D118F0B6A2EFE8D2B3B5C9F6AB8A"' });
    const photo = await photos().fetchPhoto(user);
    expect(photo).toEqual({ contentType: 'image/jpeg', data: JPEG, etag: 'W/"BA09D118F0B6A2EFE8D2B3B5C9F6AB8A"' });
    graph.done();
  });

  it('answers null for a user without a photo (404 ImageNotFound), which is not an error', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get(`/v1.0/users/${uid(1)}/photo/$value`)
      .reply(404, graphErrorBody('ImageNotFound', 'Exception of type Microsoft.Fast.Profile.Core.Exception.ImageNotFoundException was thrown.'));
    expect(await photos().fetchPhoto(user)).toBeNull();
    graph.done();
  });

  it('makes no call for a user the directory lists without a photo', async () => {
    expect(await photos().fetchPhoto({ externalId: uid(1), photo: null })).toBeNull();
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('maps a missing user to MailboxError(user_not_found) and a 429 to RateLimitedError', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get(`/v1.0/users/${uid(1)}/photo/$value`)
      .reply(404, graphErrorBody('Request_ResourceNotFound', `Resource '${uid(1)}' does not exist.`))
      .get(`/v1.0/users/${uid(1)}/photo/$value`)
      .reply(429, graphErrorBody('TooManyRequests', 'Too many requests'), { 'Retry-After': '3' });
    const src = photos();
    const missing = await src.fetchPhoto(user).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(MailboxError);
    expect(missing).toMatchObject({ code: 'user_not_found', status: 404, providerCode: 'Request_ResourceNotFound' });
    const throttled = await src.fetchPhoto(user).catch((e: unknown) => e);
    expect(throttled).toBeInstanceOf(RateLimitedError);
    expect(throttled).toMatchObject({ retryAfterMs: 3000 });
    graph.done();
  });
});
