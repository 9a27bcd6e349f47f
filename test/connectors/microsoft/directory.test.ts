import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, listPages, useNock } from '../helpers.ts';
import { microsoftDirectorySource, DELTA_TOKEN_LIFETIME_MS } from '../../../connectors/microsoft/directory.ts';
import {
  AccessLostError,
  ConnectorError,
  CursorExpiredError,
  type DirectoryUser,
  type DirectorySource,
  InvalidResponseError,
  RateLimitedError,
  TransientError,
} from '../../../connectors/types.ts';
import {
  ACCESS_TOKEN,
  config,
  CREDENTIALS,
  EXT,
  fixture,
  GRAPH,
  graphErrorBody,
  mockFullListing,
  mockGroupList,
  mockGroups,
  mockMemberOf,
  mockPurpose,
  SELECT,
  tokenScope,
  uid,
} from './helpers.ts';

const LATEST = 'https://graph.microsoft.com/v1.0/users/delta?$deltatoken=LATEST-Xk9qfR2';

function source(extra: Record<string, unknown> = { extension_attributes: [EXT] }, logger = captureLogger().logger): DirectorySource {
  return microsoftDirectorySource.create({ config: config(extra), credentials: CREDENTIALS, logger });
}

function fresh(): { token: string; obtainedAt: string } {
  return { token: LATEST, obtainedAt: new Date(Date.now() - 3600_000).toISOString() };
}

useNock();

describe('Microsoft Entra directory: full listing', () => {
  it('lists users across three pages into the expected clean users, with groups and the token taken before the listing', async () => {
    const order: string[] = [];
    const token = tokenScope();
    const graph = mockGroups(mockFullListing(nock(GRAPH).matchHeader('authorization', `Bearer ${ACCESS_TOKEN}`), order));
    const src = source();

    const groups = await src.listGroups();
    const pages = await listPages(src);

    const expected = fixture<{ groups: unknown; users: unknown[]; skipped: unknown[] }>('users.expected.json');
    expect(groups).toEqual(expected.groups);
    expect(pages).toHaveLength(3);
    expect(pages.flatMap((p) => p.users)).toEqual(expected.users);
    expect(pages.flatMap((p) => p.skipped)).toEqual(expected.skipped);
    expect(pages.flatMap((p) => p.removedIds)).toEqual([]);
    // The delta token is asked for first, and handed back on the last page only.
    expect(order).toEqual(['latest', 'page1', 'page2', 'page3']);
    expect(pages[0]!.nextState).toBeUndefined();
    expect(pages[1]!.nextState).toBeUndefined();
    expect(pages[2]!.nextPageToken).toBeNull();
    expect(pages[2]!.nextState?.token).toBe(LATEST);
    expect(Date.now() - Date.parse(pages[2]!.nextState!.obtainedAt)).toBeLessThan(60_000);
    token.done();
    graph.done();
  });

  it('maps removed users, aliases, unicode names, users without an email and duplicate emails as the fixtures say', async () => {
    tokenScope();
    mockGroups(mockFullListing(nock(GRAPH)));
    const users = (await listPages(source())).flatMap((p) => p.users);
    const byId = new Map(users.map((u) => [u.externalId, u]));

    expect(byId.get(uid(1))).toMatchObject({
      primaryEmail: 'adele.vance@contoso.com',
      aliases: ['AdeleV@contoso.com', 'adele@contoso.onmicrosoft.com'],
      removed: false,
    });
    expect(byId.get(uid(2))!.displayName).toBe('نور الهدى');
    expect(byId.get(uid(3))!.displayName).toBe('Zoë Šťastná 🚀');
    expect(byId.get(uid(7))!.aliases).toEqual(['yael.cohen@contoso.com']);
    expect(byId.get(uid(4))!.removed).toBe(true);
    expect(byId.has(uid(5))).toBe(false);
    // Two directory users with one address are both returned; the engine decides.
    expect(users.filter((u) => u.primaryEmail === 'adele.vance@contoso.com').map((u) => u.externalId)).toEqual([uid(1), uid(6)]);
    expect(byId.get(uid(1))!.attributes[EXT]).toBe('CC-1001');
    expect(byId.get(uid(2))!.attributes[EXT]).toBe('42');
    expect(byId.get(uid(3))!.attributes[EXT]).toBe('Sales, EMEA');
  });

  it('resumes from a page token in a new source instance: groups load again and the token taken before the listing is still handed back', async () => {
    tokenScope();
    const first = mockGroups(nock(GRAPH))
      .get('/v1.0/users/delta')
      .query({ $select: SELECT, $deltatoken: 'latest' })
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query({ $select: SELECT, $top: '999' })
      .reply(200, fixture('users.page1.json'))
      .get('/v1.0/users')
      .query({ $select: SELECT, $top: '999', $skiptoken: 'RFNwdAIAAQAAACpVc2VyXzAwMDM' })
      .reply(200, fixture('users.page2.json'));
    mockPurpose(first, uid(4), 'user');
    const pages = await listPages(source(), {}, 2);
    first.done();
    // The run "crashes" here; the engine kept the token after page 2.
    const saved = pages[1]!.nextPageToken!;
    const { deltaAt } = JSON.parse(saved) as { deltaAt: string };

    tokenScope();
    const resumed = mockGroups(nock(GRAPH))
      .get('/v1.0/users')
      .query({ $select: SELECT, $top: '999', $skiptoken: 'RFNwdAIAAQAAACpVc2VyXzAwMDY' })
      .reply(200, fixture('users.page3.json'));
    const last = await source().fetchUsersPage({ pageToken: saved });
    expect(last.users.map((u) => u.externalId)).toEqual([uid(7), uid(8)]);
    expect(last.users[0]!.groups).toEqual(['g-all-0002']);
    expect(last.nextPageToken).toBeNull();
    expect(last.nextState).toEqual({ token: LATEST, obtainedAt: deltaAt });
    resumed.done();
  });

  it('lists an empty directory as one empty last page that still carries the delta token', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get('/v1.0/groups')
      .query(true)
      .reply(200, { value: [] })
      .get('/v1.0/users/delta')
      .query({ $select: SELECT, $deltatoken: 'latest' })
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query({ $select: SELECT, $top: '999' })
      .reply(200, fixture('users.empty.json'));
    const src = source();
    expect(await src.listGroups()).toEqual([]);
    const pages = await listPages(src);
    expect(pages).toEqual([{ users: [], skipped: [], removedIds: [], nextPageToken: null, nextState: { token: LATEST, obtainedAt: expect.any(String) } }]);
    graph.done();
  });

  it('fails a page that does not parse with InvalidResponseError, naming the bad field', async () => {
    tokenScope();
    const graph = mockGroups(nock(GRAPH))
      .get('/v1.0/users/delta')
      .query(true)
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query(true)
      .reply(200, fixture('users.malformed.json'));
    const err = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as InvalidResponseError).code).toBe('invalid_response');
    expect((err as InvalidResponseError).issues.map((i) => i.path.join('.'))).toEqual(['value.0.id', 'value.1.businessPhones']);
    expect((err as Error).message).toContain('value.0.id');
    graph.done();
  });

  it('fails a body that is not JSON with InvalidResponseError', async () => {
    tokenScope();
    const graph = mockGroups(nock(GRAPH))
      .get('/v1.0/users/delta')
      .query(true)
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query(true)
      .reply(200, '<html>upstream error</html>', { 'content-type': 'application/json' });
    const err = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toContain('body is not JSON');
    graph.done();
  });

  it('turns a 429 with Retry-After into RateLimitedError at once, without the SDK retrying', async () => {
    tokenScope();
    const graph = mockGroups(nock(GRAPH))
      .get('/v1.0/users/delta')
      .query(true)
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query(true)
      .once()
      .reply(429, graphErrorBody('TooManyRequests', 'Too many requests'), { 'Retry-After': '7' });
    const started = Date.now();
    const err = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'rate_limited', retryAfterMs: 7000, status: 429, providerCode: 'TooManyRequests' });
    // Retry-After is 7 s: an SDK that waited it would take that long.
    expect(Date.now() - started).toBeLessThan(7000);
    graph.done();
  });

  it('turns 503 with Retry-After into RateLimitedError, and 503 without it, 500 and network failures into TransientError', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get('/v1.0/groups')
      .query(true)
      .reply(503, graphErrorBody('serviceNotAvailable', 'Service unavailable'), { 'Retry-After': '12' })
      .get('/v1.0/groups')
      .query(true)
      .reply(503, 'Service Unavailable')
      .get('/v1.0/groups')
      .query(true)
      .reply(500, graphErrorBody('generalException', 'General exception'));
    const src = source();
    const e1 = await src.listGroups().catch((e: unknown) => e);
    expect(e1).toBeInstanceOf(RateLimitedError);
    expect(e1).toMatchObject({ retryAfterMs: 12_000, status: 503, providerCode: 'serviceNotAvailable' });
    const e2 = await src.listGroups().catch((e: unknown) => e);
    expect(e2).toBeInstanceOf(TransientError);
    expect(e2).toMatchObject({ code: 'transient', status: 503 });
    const e3 = await src.listGroups().catch((e: unknown) => e);
    expect(e3).toMatchObject({ code: 'transient', status: 500, providerCode: 'generalException' });
    graph.done();
    // Nothing answers any more: the connection fails (net connect is off), as on a network outage.
    nock.cleanAll();
    const e4 = await src.listGroups().catch((e: unknown) => e);
    expect(e4).toBeInstanceOf(TransientError);
    expect(e4).toMatchObject({ code: 'transient', status: undefined });
    expect((e4 as Error).message).toContain('fetch failed');
  });

  it('stops with AccessLostError when access is revoked in the middle of a listing', async () => {
    tokenScope();
    const graph = mockGroups(nock(GRAPH))
      .get('/v1.0/users/delta')
      .query(true)
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query({ $select: SELECT, $top: '999' })
      .reply(200, fixture('users.page1.json'))
      .get('/v1.0/users')
      .query(true)
      .reply(403, graphErrorBody('Authorization_RequestDenied', 'Insufficient privileges to complete the operation.'));
    const src = source();
    const page1 = await src.fetchUsersPage({});
    expect(page1.users).toHaveLength(3);
    const err = await src.fetchUsersPage({ pageToken: page1.nextPageToken! }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ code: 'access_lost', status: 403, providerCode: 'Authorization_RequestDenied' });
    expect((err as Error).message).toContain('Insufficient privileges');
    graph.done();
  });

  it('turns 401 InvalidAuthenticationToken into AccessLostError', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get('/v1.0/groups')
      .query(true)
      .reply(401, graphErrorBody('InvalidAuthenticationToken', 'Access token validation failure. Invalid audience.'));
    const err = await source()
      .listGroups()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ status: 401, providerCode: 'InvalidAuthenticationToken' });
    graph.done();
  });

  it('resumes a member listing where a 429 stopped it, instead of listing every group again', async () => {
    tokenScope();
    // Every page is answered once; All staff's second members page first answers 429.
    const graph = mockGroups(mockFullListing(nock(GRAPH)), true);
    const src = source();
    await expect(src.fetchUsersPage({})).rejects.toBeInstanceOf(RateLimitedError);
    const users = (await listPages(src)).flatMap((p) => p.users);
    graph.done(); // no page was asked for twice, but the one that answered 429
    const expected = fixture<{ users: DirectoryUser[] }>('users.expected.json');
    expect(users.map((u) => u.groups)).toEqual(expected.users.map((u) => u.groups));
  });

  it('keeps going when a group disappears between the group list and its members', async () => {
    tokenScope();
    const graph = mockFullListing(
      nock(GRAPH)
        .get('/v1.0/groups')
        .query(true)
        .reply(200, fixture('groups.json'))
        .get('/v1.0/groups/g-sales-0001/transitiveMembers')
        .query(true)
        .reply(404, graphErrorBody('Request_ResourceNotFound', "Resource 'g-sales-0001' does not exist."))
        .get('/v1.0/groups/g-all-0002/transitiveMembers')
        .query({ $select: 'id', $top: '999' })
        .reply(200, fixture('groups.g-all-0002.members.page1.json'))
        .get('/v1.0/groups/g-all-0002/transitiveMembers')
        .query(true)
        .reply(200, fixture('groups.g-all-0002.members.page2.json')),
    );
    const src = source();
    expect((await src.listGroups()).map((g) => g.externalId)).toEqual(['g-sales-0001', 'g-all-0002']);
    const users = (await listPages(src)).flatMap((p) => p.users);
    expect(users.some((u) => u.groups.includes('g-sales-0001'))).toBe(false);
    expect(users.filter((u) => u.groups.includes('g-all-0002')).length).toBeGreaterThan(0);
    graph.done();
  });

  it('refuses a next link that points away from the configured Graph host', async () => {
    tokenScope();
    const graph = mockGroups(nock(GRAPH));
    const pageToken = JSON.stringify({ next: 'https://evil.example/v1.0/users?$skiptoken=x' });
    const err = await source()
      .fetchUsersPage({ pageToken })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toContain('https://evil.example');
    graph.done();
  });

  it('accepts a bare next link as page token, and rejects a token that is neither', async () => {
    tokenScope();
    const graph = mockGroups(nock(GRAPH))
      .get('/v1.0/users')
      .query({ $select: SELECT, $top: '999', $skiptoken: 'RFNwdAIAAQAAACpVc2VyXzAwMDY' })
      .reply(200, fixture('users.page3.json'));
    const src = source();
    const page = await src.fetchUsersPage({ pageToken: fixture<{ '@odata.nextLink': string }>('users.page2.json')['@odata.nextLink'] });
    expect(page.users.map((u) => u.externalId)).toEqual([uid(7), uid(8)]);
    // A bare link carries no delta token: the listing ends without one rather than with a wrong one.
    expect(page.nextState).toBeUndefined();
    const err = await src.fetchUsersPage({ pageToken: 'not a link' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toContain('Microsoft page token');
    graph.done();
  });

  it('uses the configured Graph and authority hosts (national clouds, sandbox) and sends the token to them', async () => {
    const token = tokenScope('https://login.sandbox.test');
    const graph = nock('https://graph.sandbox.test:8443')
      .matchHeader('authorization', `Bearer ${ACCESS_TOKEN}`)
      .get('/tenant/v1.0/groups')
      .query(true)
      .reply(200, { value: [] })
      .get('/tenant/v1.0/users/delta')
      .query({ $select: SELECT.replace(`,${EXT}`, ''), $deltatoken: 'latest' })
      .reply(200, { '@odata.deltaLink': 'https://graph.sandbox.test:8443/tenant/v1.0/users/delta?$deltatoken=S1', value: [] })
      .get('/tenant/v1.0/users')
      .query({ $select: SELECT.replace(`,${EXT}`, ''), $top: '999' })
      .reply(200, { '@odata.nextLink': 'https://graph.sandbox.test:8443/tenant/v1.0/users?$skiptoken=P2', value: [] })
      .get('/tenant/v1.0/users')
      .query({ $skiptoken: 'P2' })
      .reply(200, { value: [{ id: 'u-1', mail: 'a@sandbox.test' }] });
    const src = source({ base_url: 'https://graph.sandbox.test:8443/tenant/v1.0', token_url: 'https://login.sandbox.test' });
    await src.listGroups();
    const pages = await listPages(src);
    expect(pages.flatMap((p) => p.users).map((u) => u.primaryEmail)).toEqual(['a@sandbox.test']);
    expect(pages[1]!.nextState?.token).toBe('https://graph.sandbox.test:8443/tenant/v1.0/users/delta?$deltatoken=S1');
    token.done();
    graph.done();
  });

  it('checks access with one cheap call to users and one to groups', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get('/v1.0/users')
      .query({ $select: 'id', $top: '1' })
      .reply(200, { value: [{ id: uid(1) }] })
      .get('/v1.0/groups')
      .query({ $select: 'id', $top: '1' })
      .reply(200, { value: [] });
    await expect(source().checkAccess()).resolves.toBeUndefined();
    graph.done();
  });
});

describe('Microsoft Entra directory: delta', () => {
  it('follows nextLink until the deltaLink, reports @removed ids and disabled users, and hands back the deltaLink on the last page only', async () => {
    tokenScope();
    // Only the changed, enabled user's memberships are asked for: not every group's members; the
    // disabled one's mailbox purpose (a person's mailbox: removed).
    const graph = mockPurpose(mockMemberOf(mockGroupList(nock(GRAPH)), uid(2), ['g-all-0002', 'g-sales-0001']), uid(3), 'user')
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'LATEST-Xk9qfR2' })
      .reply(200, fixture('users.delta.page1.json'))
      .get('/v1.0/users/delta')
      .query({ $skiptoken: 'DELTA-PAGE-2-pqwSUjGYvb3' })
      .reply(200, fixture('users.delta.page2.json'));
    const src = source();
    expect(src.incremental).toBe(true);
    const pages = await listPages(src, { since: fresh() });
    const expected = fixture<{ pages: { users: unknown[]; removedIds: string[]; skipped: unknown[]; last: boolean; nextStateToken: string | null }[] }>(
      'users.delta.expected.json',
    );
    expect(pages).toHaveLength(2);
    pages.forEach((p, i) => {
      const e = expected.pages[i]!;
      expect(p.users).toEqual(e.users);
      expect(p.removedIds).toEqual(e.removedIds);
      expect(p.skipped).toEqual(e.skipped);
      expect(p.nextPageToken === null).toBe(e.last);
      expect(p.nextState?.token ?? null).toBe(e.nextStateToken);
    });
    expect(pages[0]!.removedIds).toEqual([uid(9)]);
    expect(pages[1]!.users[0]).toMatchObject({ externalId: uid(3), removed: true });
    expect(pages[1]!.removedIds).toEqual([uid(6)]);
    expect(pages[0]!.nextState).toBeUndefined();
    expect(pages[1]!.nextState!.token).toBe('https://graph.microsoft.com/v1.0/users/delta?$deltatoken=NEXT-mS5DuRZGjVL-abc');
    graph.done();
  });

  it('returns only the changed users: after a full listing of 300 users, a delta round with 1% changed returns those 3', async () => {
    const all = Array.from({ length: 300 }, (_, i) => ({ id: `u-${i}`, displayName: `User ${i}`, mail: `user${i}@contoso.com`, accountEnabled: true }));
    tokenScope();
    const full = nock(GRAPH)
      .get('/v1.0/groups')
      .query(true)
      .reply(200, { value: [] })
      .get('/v1.0/users/delta')
      .query((q) => q.$deltatoken === 'latest')
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T1`, value: [] });
    for (let p = 0; p < 3; p++) {
      full
        .get('/v1.0/users')
        .query((q) => (p === 0 ? q.$skiptoken === undefined && q.$top === '999' : q.$skiptoken === `p${p}`))
        .reply(200, { ...(p < 2 ? { '@odata.nextLink': `${GRAPH}/v1.0/users?$skiptoken=p${p + 1}` } : {}), value: all.slice(p * 100, p * 100 + 100) });
    }
    const src = source({});
    const listing = await listPages(src);
    expect(listing.flatMap((p) => p.users)).toHaveLength(300);
    full.done();

    const changed = [all[7]!, all[150]!, all[299]!].map((u) => ({ ...u, jobTitle: 'Promoted' }));
    const delta = nock(GRAPH)
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'T1' })
      .reply(200, { '@odata.deltaLink': `${GRAPH}/v1.0/users/delta?$deltatoken=T2`, value: changed });
    for (const u of changed) mockMemberOf(delta, u.id, []);
    const pages = await listPages(src, { since: listing.at(-1)!.nextState! });
    expect(pages).toHaveLength(1);
    expect(pages[0]!.users.map((u) => u.externalId)).toEqual(['u-7', 'u-150', 'u-299']);
    expect(pages[0]!.users.every((u) => u.attributes.jobTitle === 'Promoted')).toBe(true);
    expect(pages[0]!.nextState!.token).toBe(`${GRAPH}/v1.0/users/delta?$deltatoken=T2`);
    delta.done();
  });

  it('throws CursorExpiredError on 410 Gone', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'LATEST-Xk9qfR2' })
      .reply(410, graphErrorBody('syncStateNotFound', 'The sync state generation is not found.'));
    const err = await source()
      .fetchUsersPage({ since: fresh() })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CursorExpiredError);
    expect(err).not.toBeInstanceOf(ConnectorError);
    expect((err as Error).message).toContain('syncStateNotFound');
    graph.done();
  });

  it('throws CursorExpiredError for a token older than 7 days without calling Graph or the token endpoint', async () => {
    const src = source();
    const stale = { token: LATEST, obtainedAt: new Date(Date.now() - DELTA_TOKEN_LIFETIME_MS - 60_000).toISOString() };
    const err = await src.fetchUsersPage({ since: stale }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CursorExpiredError);
    expect((err as Error).message).toContain('7-day');
    const garbled = await src.fetchUsersPage({ since: { token: LATEST, obtainedAt: 'yesterday' } }).catch((e: unknown) => e);
    expect(garbled).toBeInstanceOf(CursorExpiredError);
    // No interceptor was defined and net connect is off: any request would have failed differently.
    expect(nock.pendingMocks()).toEqual([]);
  });
});
