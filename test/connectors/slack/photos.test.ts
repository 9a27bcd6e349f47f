import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { slackPhotoSource } from '../../../connectors/slack/photos.ts';
import { InvalidResponseError, type PhotoSource, RateLimitedError, TransientError } from '../../../connectors/types.ts';
import { config, CREDENTIALS } from './helpers.ts';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]);
const AVATARS = 'https://avatars.slack-edge.com';
const alice = { externalId: 'U01ALICE', photo: { url: `${AVATARS}/2024-03-11/alice_512.png`, etag: 'g1a2b3c4d5e6' } };

function photos(extra: Record<string, unknown> = {}): PhotoSource {
  return slackPhotoSource.create({ config: config(extra), credentials: CREDENTIALS, logger: captureLogger().logger });
}

useNock();

describe('Slack photo source', () => {
  it('downloads image_512 without sending the bot token, with the avatar hash as etag', async () => {
    const scope = nock(AVATARS, { badheaders: ['authorization'] })
      .get('/2024-03-11/alice_512.png')
      .reply(200, PNG, { 'Content-Type': 'image/png' });
    expect(await photos().fetchPhoto(alice)).toEqual({ contentType: 'image/png', data: PNG, etag: 'g1a2b3c4d5e6' });
    scope.done();
  });

  it('answers null without a call for a member without a picture', async () => {
    expect(await photos().fetchPhoto({ externalId: 'U02RTL01', photo: null })).toBeNull();
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('follows redirects between Slack image hosts and refuses one that leaves them', async () => {
    const scope = nock('https://secure.gravatar.com')
      .get('/avatar/abc.jpg')
      .query(true)
      .reply(302, '', { Location: 'https://a.slack-edge.com/df10d/img/avatars/ava_0010-512.png' })
      .get('/avatar/evil.jpg')
      .reply(302, '', { Location: 'http://169.254.169.254/latest/meta-data/' });
    const edge = nock('https://a.slack-edge.com').get('/df10d/img/avatars/ava_0010-512.png').reply(200, PNG, { 'Content-Type': 'image/png', ETag: '"e1"' });
    const src = photos();
    expect(await src.fetchPhoto({ externalId: 'U1', photo: { url: 'https://secure.gravatar.com/avatar/abc.jpg?s=512' } })).toEqual({
      contentType: 'image/png',
      data: PNG,
      etag: '"e1"',
    });
    const evil = await src.fetchPhoto({ externalId: 'U2', photo: { url: 'https://secure.gravatar.com/avatar/evil.jpg' } }).catch((e: unknown) => e);
    expect(evil).toBeInstanceOf(InvalidResponseError);
    expect((evil as Error).message).toContain('169.254.169.254');
    scope.done();
    edge.done();
  });

  it('refuses a URL that is not on a Slack image host, and allows the configured base URL host', async () => {
    const err = await photos()
      .fetchPhoto({ externalId: 'U1', photo: { url: 'https://intranet.acme.test/photo.png' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    const sandbox = nock('http://slack.sandbox.test:9000').get('/avatars/u1.png').reply(200, PNG, { 'Content-Type': 'image/png' });
    const photo = await photos({ base_url: 'http://slack.sandbox.test:9000/api/' }).fetchPhoto({
      externalId: 'U1',
      photo: { url: 'http://slack.sandbox.test:9000/avatars/u1.png' },
    });
    expect(photo?.data).toEqual(PNG);
    sandbox.done();
  });

  it('answers null on 404 and maps 429 and 5xx', async () => {
    const scope = nock(AVATARS)
      .get('/2024-03-11/alice_512.png')
      .reply(404)
      .get('/2024-03-11/alice_512.png')
      .reply(429, '', { 'Retry-After': '9' })
      .get('/2024-03-11/alice_512.png')
      .reply(502);
    const src = photos();
    expect(await src.fetchPhoto(alice)).toBeNull();
    const throttled = await src.fetchPhoto(alice).catch((e: unknown) => e);
    expect(throttled).toBeInstanceOf(RateLimitedError);
    expect(throttled).toMatchObject({ retryAfterMs: 9000, status: 429 });
    const bad = await src.fetchPhoto(alice).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TransientError);
    expect(bad).toMatchObject({ status: 502 });
    scope.done();
  });
});
