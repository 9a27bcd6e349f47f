import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, listPages, useNock } from '../helpers.ts';
import { slackDirectorySource } from '../../../connectors/slack/directory.ts';
import { AccessLostError, type DirectorySource, InvalidResponseError, RateLimitedError, TransientError } from '../../../connectors/types.ts';
import { config, CREDENTIALS, field, fixture, mockProfiles, mockUsersList, SCOPES, slack, slackError } from './helpers.ts';

function source(extra: Record<string, unknown> = {}, logger = captureLogger().logger): DirectorySource {
  return slackDirectorySource.create({ config: config(extra), credentials: CREDENTIALS, logger });
}

useNock();

describe('Slack directory', () => {
  it('lists members across three cursor pages into the expected clean users, with custom fields when a smart field needs one', async () => {
    const scope = mockProfiles(mockUsersList(slack()));
    const src = source();
    expect(src.incremental).toBe(false);
    const pages = await listPages(src, { attributes: ['title', 'fields.Pronouns'] });

    const expected = fixture<{ users: unknown[]; skipped: unknown[] }>('users.expected.json');
    expect(pages.map((p) => p.nextPageToken)).toEqual(['dXNlcjpVMDJSVEw=', 'dXNlcjpVMDNEVVBF', null]);
    expect(pages.flatMap((p) => p.users)).toEqual(expected.users);
    expect(pages.flatMap((p) => p.skipped)).toEqual(expected.skipped);
    expect(pages.every((p) => p.removedIds.length === 0 && p.nextState === undefined)).toBe(true);
    scope.done();
  });

  it('skips slackbot, bots, workflow bots and members without email, marks deactivated members removed, and keeps unicode names and duplicate emails', async () => {
    mockUsersList(slack());
    const pages = await listPages(source(), { attributes: ['title'] });
    const users = pages.flatMap((p) => p.users);
    expect(pages.flatMap((p) => p.skipped)).toEqual([
      { externalId: 'USLACKBOT', reason: 'slackbot' },
      { externalId: 'U01BOT01', reason: 'bot' },
      { externalId: 'U02GUEST', reason: 'no_email' },
      { externalId: 'U03WFLOW', reason: 'bot' },
    ]);
    expect(users.find((u) => u.externalId === 'U02GONE1')).toMatchObject({ removed: true, primaryEmail: 'gone@acme.test' });
    expect(users.find((u) => u.externalId === 'U02RTL01')!.displayName).toBe('محمد علي');
    expect(users.find((u) => u.externalId === 'U03UNI01')!.displayName).toBe('🦄 uni');
    expect(users.filter((u) => u.primaryEmail === 'alice@acme.test').map((u) => u.externalId)).toEqual(['U01ALICE', 'U03DUPE1']);
    // A default (generated) avatar is no photo; a custom one carries its avatar hash as etag.
    expect(users.find((u) => u.externalId === 'U02RTL01')!.photo).toBeNull();
    expect(users.find((u) => u.externalId === 'U01ALICE')!.photo).toEqual({
      url: 'https://avatars.slack-edge.com/2024-03-11/alice_512.png',
      etag: 'g1a2b3c4d5e6',
    });
  });

  it('makes no users.profile.get call when no smart field maps to a custom field', async () => {
    const scope = mockUsersList(slack());
    const users = (await listPages(source(), { attributes: ['title', 'phone'] })).flatMap((p) => p.users);
    expect(users.flatMap((u) => Object.keys(u.attributes)).filter((k) => k.startsWith('fields.'))).toEqual([]);
    scope.done();
    // Any profile call would have hit an unmocked route.
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('fetches custom fields when the attributes are left open ("all you can")', async () => {
    const scope = mockProfiles(mockUsersList(slack()));
    const users = (await listPages(source())).flatMap((p) => p.users);
    expect(users.find((u) => u.externalId === 'U01ALICE')!.attributes['fields.Pronouns']).toBe('she/her');
    scope.done();
  });

  it('paces users.profile.get to the configured rate', async () => {
    mockProfiles(mockUsersList(slack()));
    const started = Date.now();
    await listPages(source({ profile_requests_per_minute: 600 }), { attributes: ['fields.Office'] });
    // Four profile calls at one per 100 ms: at least three intervals.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('keeps a member whose profile is gone by the time it is read, without custom fields', async () => {
    const scope = slack()
      .post('/api/users.list')
      .reply(200, { ok: true, members: [fixture<{ members: unknown[] }>('users.list.page1.json').members[1]], response_metadata: { next_cursor: '' } }, SCOPES)
      .post('/api/team.profile.get')
      .reply(200, fixture('team.profile.get.json'))
      .post('/api/users.profile.get', field('user', 'U01ALICE'))
      .reply(200, slackError('user_not_found'));
    const [page] = await listPages(source(), { attributes: ['fields.Pronouns'] });
    expect(page!.users.map((u) => u.externalId)).toEqual(['U01ALICE']);
    expect(page!.users[0]!.attributes['fields.Pronouns']).toBeUndefined();
    scope.done();
  });

  it('lists an empty workspace as one empty last page', async () => {
    const scope = slack().post('/api/users.list').reply(200, fixture('users.list.empty.json'), SCOPES);
    expect(await listPages(source())).toEqual([{ users: [], removedIds: [], skipped: [], nextPageToken: null }]);
    scope.done();
  });

  it('fails a page that does not parse with InvalidResponseError', async () => {
    const scope = slack().post('/api/users.list').reply(200, fixture('users.list.malformed.json'), SCOPES);
    const err = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).issues.map((i) => i.path.join('.'))).toEqual(['members.0.id', 'members.1.profile']);
    scope.done();
  });

  it('turns a 429 with Retry-After into RateLimitedError at once (the SDK neither retries nor pauses)', async () => {
    const scope = slack().post('/api/users.list').once().reply(429, slackError('ratelimited'), { 'Retry-After': '30' });
    const started = Date.now();
    const err = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'rate_limited', retryAfterMs: 30_000, status: 429, providerCode: 'ratelimited' });
    // Retry-After is 30 s: an SDK that paused for it would take that long.
    expect(Date.now() - started).toBeLessThan(30_000);
    scope.done();
  });

  it('turns a rate-limited users.profile.get into RateLimitedError', async () => {
    const scope = slack()
      .post('/api/users.list')
      .reply(200, fixture('users.list.page1.json'), SCOPES)
      .post('/api/team.profile.get')
      .reply(200, fixture('team.profile.get.json'))
      .post('/api/users.profile.get')
      .reply(429, slackError('ratelimited'), { 'Retry-After': '4' });
    const err = await source()
      .fetchUsersPage({ attributes: ['fields.Office'] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'rate_limited', retryAfterMs: 4000 });
    scope.done();
  });

  it.each(['invalid_auth', 'token_revoked', 'account_inactive', 'not_authed', 'missing_scope'])(
    'stops with AccessLostError when Slack answers %s in the middle of a listing',
    async (code) => {
      const scope = slack()
        .post('/api/users.list', field('cursor', undefined))
        .reply(200, fixture('users.list.page1.json'), SCOPES)
        .post('/api/users.list', field('cursor', 'dXNlcjpVMDJSVEw='))
        .reply(200, slackError(code, code === 'missing_scope' ? { needed: 'users:read.email', provided: 'users:read' } : {}));
      const src = source();
      const first = await src.fetchUsersPage({ attributes: [] });
      expect(first.users).toHaveLength(1);
      const err = await src.fetchUsersPage({ pageToken: first.nextPageToken!, attributes: [] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AccessLostError);
      expect(err).toMatchObject({ code: 'access_lost', providerCode: code });
      expect((err as Error).message).toContain(code);
      scope.done();
    },
  );

  it('refuses to list when the token lacks users:read.email, instead of skipping everyone', async () => {
    const scope = slack().post('/api/users.list').reply(200, fixture('users.list.page1.json'), { 'x-oauth-scopes': 'users:read,chat:write' });
    const err = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ providerCode: 'missing_scope' });
    expect((err as Error).message).toContain('users:read.email');
    scope.done();
  });

  it('turns internal_error, HTTP 5xx and network failures into TransientError', async () => {
    const scope = slack().post('/api/users.list').reply(200, slackError('internal_error')).post('/api/users.list').reply(503, 'upstream unavailable');
    const src = source();
    expect(await src.fetchUsersPage({}).catch((e: unknown) => e)).toMatchObject({ code: 'transient', providerCode: 'internal_error' });
    const http = await src.fetchUsersPage({}).catch((e: unknown) => e);
    expect(http).toBeInstanceOf(TransientError);
    expect(http).toMatchObject({ status: 503 });
    scope.done();
    nock.cleanAll();
    const network = await src.fetchUsersPage({}).catch((e: unknown) => e);
    expect(network).toBeInstanceOf(TransientError);
    expect((network as Error).message).toContain('users.list');
  });

  it('calls the configured Web API root (sandbox, tests) and checks access with auth.test', async () => {
    const scope = slack('https://slack.sandbox.test')
      .post('/web/api/auth.test')
      .reply(200, fixture('auth.test.json'), SCOPES)
      .post('/web/api/users.list')
      .reply(200, fixture('users.list.empty.json'), SCOPES);
    const src = source({ base_url: 'https://slack.sandbox.test/web/api' });
    await expect(src.checkAccess()).resolves.toBeUndefined();
    expect(await src.listGroups()).toEqual([]);
    await src.fetchUsersPage({});
    scope.done();
  });

  it('maps a revoked token on auth.test to AccessLostError', async () => {
    const scope = slack().post('/api/auth.test').reply(200, slackError('token_revoked'));
    expect(
      await source()
        .checkAccess()
        .catch((e: unknown) => e),
    ).toBeInstanceOf(AccessLostError);
    scope.done();
  });
});
