import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { listPages, useNock } from '../helpers.ts';
import { directorySources, mailboxInstallers, photoSources } from '../../../connectors/registry.ts';
import { DIRECTORY_SCOPES, googleDirectorySource } from '../../../connectors/google/directory.ts';
import { RateLimitedError, type DirectoryPage, type DirectoryUser, type FetchUsersOptions } from '../../../connectors/types.ts';
import {
  ADMIN_ORIGIN,
  ADMIN_SUBJECT,
  CLIENT_EMAIL,
  TOKEN_RESPONSE,
  USERS_PATH,
  apiError,
  fixture,
  formBody,
  mockTokenExchange,
  serviceAccountKey,
  silentLogger,
} from './helpers.ts';

const GROUPS = { sales: '03whwit32k9m6de', engineering: '01baon6m1h5xq2f', allStaff: '02et92p01a8bcde', salesEmea: '00meukdy0q2w3e4' };
const page1 = fixture<{ nextPageToken: string }>('users.list.page1.json');
const page2 = fixture<{ nextPageToken: string }>('users.list.page2.json');
const page3 = fixture('users.list.page3.json');
const expected = fixture<DirectoryUser[]>('users.expected.json');

function source(config: Record<string, unknown> = {}, credentials: Record<string, unknown> = serviceAccountKey()) {
  const def = googleDirectorySource;
  return def.create({ config: def.configSchema.parse(config), credentials: def.credentialsSchema.parse(credentials), logger: silentLogger() });
}

/** groups.list (two pages) and members.list for each group (engineering on two pages), each answered once. */
/** groups.list and members.list as recorded; with `throttled`, engineering's second members page first answers 429. */
function mockGroupsAndMembers(api: nock.Scope, order?: string[], throttled = false) {
  const note = (what: string) => () => order?.push(what);
  api
    .get('/admin/directory/v1/groups')
    .query({ customer: 'my_customer', maxResults: '200' })
    .reply(200, () => (note('groups.list')(), fixture('groups.list.page1.json')))
    .get('/admin/directory/v1/groups')
    .query({ customer: 'my_customer', maxResults: '200', pageToken: fixture<{ nextPageToken: string }>('groups.list.page1.json').nextPageToken })
    .reply(200, fixture('groups.list.page2.json'));
  const members = { includeDerivedMembership: 'true', maxResults: '200' };
  api
    .get(`/admin/directory/v1/groups/${GROUPS.sales}/members`)
    .query(members)
    .reply(200, () => (note('members.list')(), fixture('members.sales.json')))
    .get(`/admin/directory/v1/groups/${GROUPS.engineering}/members`)
    .query(members)
    .reply(200, fixture('members.engineering.page1.json'))
    .get(`/admin/directory/v1/groups/${GROUPS.allStaff}/members`)
    .query(members)
    .reply(200, fixture('members.all-staff.json'))
    .get(`/admin/directory/v1/groups/${GROUPS.salesEmea}/members`)
    .query(members)
    .reply(200, fixture('members.sales-emea.json'));
  const engineeringPage2 = () =>
    api
      .get(`/admin/directory/v1/groups/${GROUPS.engineering}/members`)
      .query({ ...members, pageToken: fixture<{ nextPageToken: string }>('members.engineering.page1.json').nextPageToken });
  if (throttled)
    engineeringPage2().reply(429, apiError(429, 'Quota exceeded for quota metric', 'rateLimitExceeded', 'RESOURCE_EXHAUSTED'), { 'Retry-After': '1' });
  engineeringPage2().reply(200, fixture('members.engineering.page2.json'));
}

const usersQuery = { customer: 'my_customer', maxResults: '500', projection: 'full' };

/** The three recorded users.list pages, chained by their page tokens. */
function mockUserPages(api: nock.Scope, order?: string[]) {
  api
    .get(USERS_PATH)
    .query(usersQuery)
    .reply(200, () => (order?.push('users.list'), page1))
    .get(USERS_PATH)
    .query({ ...usersQuery, pageToken: page1.nextPageToken })
    .reply(200, () => (order?.push('users.list'), page2))
    .get(USERS_PATH)
    .query({ ...usersQuery, pageToken: page2.nextPageToken })
    .reply(200, page3);
}

/**
 * One users page with its users' groups, as the engine gets them: a page listed before the
 * memberships were loaded (groupsPending) gets them from groupsOf, once they are.
 */
async function fetchPage(src: ReturnType<typeof source>, opts: FetchUsersOptions): Promise<DirectoryPage> {
  const page = await src.fetchUsersPage(opts);
  if (!page.groupsPending) return page;
  const groups = await src.groupsOf!(
    page.users.map((u) => ({ externalId: u.externalId, emails: [...(u.primaryEmail ? [u.primaryEmail] : []), ...u.aliases] })),
  );
  const { groupsPending: _, ...rest } = page;
  return { ...rest, users: page.users.map((u) => ({ ...u, groups: groups.get(u.externalId) ?? [] })) };
}

async function listAll(src: ReturnType<typeof source>, attributes?: string[]) {
  const pages = await listPages(src, attributes ? { attributes } : {}, Infinity, (opts) => fetchPage(src, opts));
  for (const page of pages) expect(page.removedIds).toEqual([]);
  return { users: pages.flatMap((p) => p.users), pageTokens: pages.map((p) => p.nextPageToken), skipped: pages.flatMap((p) => p.skipped) };
}

/** A full listing of the recorded directory, with every mock asserted used. */
async function listRecordedDirectory(config: Record<string, unknown> = {}, attributes?: string[]) {
  const token = mockTokenExchange();
  const api = nock(ADMIN_ORIGIN).matchHeader('authorization', `Bearer ${TOKEN_RESPONSE.access_token}`);
  mockGroupsAndMembers(api);
  mockUserPages(api);
  const result = await listAll(source(config), attributes);
  token.done();
  api.done();
  return result;
}

function byEmail(users: DirectoryUser[], email: string): DirectoryUser {
  const u = users.find((x) => x.primaryEmail === email);
  if (!u) throw new Error(`no user ${email}`);
  return u;
}

useNock();

describe('Google Workspace directory source', () => {
  it('is registered for google_workspace as directory source, mailbox installer and photo source', () => {
    expect(directorySources.google_workspace).toBe(googleDirectorySource);
    expect(mailboxInstallers.google_workspace?.kind).toBe('google_workspace');
    expect(photoSources.google_workspace?.kind).toBe('google_workspace');
    expect(source().incremental).toBe(false);
  });

  it('acts as the admin subject through domain-wide delegation, with the directory scopes', async () => {
    let claims: Record<string, unknown> = {};
    const token = mockTokenExchange((c) => (claims = c));
    const api = nock(ADMIN_ORIGIN)
      .matchHeader('authorization', `Bearer ${TOKEN_RESPONSE.access_token}`)
      .get(USERS_PATH)
      .query({ customer: 'my_customer', maxResults: '1' })
      .reply(200, { kind: 'admin#directory#users', users: [] });
    await source().checkAccess();
    token.done();
    api.done();
    expect(claims).toMatchObject({ iss: CLIENT_EMAIL, sub: ADMIN_SUBJECT, aud: 'https://oauth2.googleapis.com/token', scope: DIRECTORY_SCOPES.join(' ') });
  });

  it('pages through users.list (customer, 500 per page, projection=full) into the expected clean users', async () => {
    const { users, pageTokens } = await listRecordedDirectory();
    expect(pageTokens).toEqual([page1.nextPageToken, page2.nextPageToken, null]);
    expect(users).toEqual(expected);
  });

  it('counts suspended and archived users as removed', async () => {
    const { users } = await listRecordedDirectory();
    expect(byEmail(users, 'bob.stone@acme.example').removed).toBe(true); // suspended
    expect(byEmail(users, 'noa.levi@acme.example').removed).toBe(true); // archived
    expect(byEmail(users, 'alice.martin@acme.example').removed).toBe(false);
  });

  it('returns aliases and non-editable aliases, without the primary address', async () => {
    const { users } = await listRecordedDirectory();
    expect(byEmail(users, 'alice.martin@acme.example').aliases).toEqual([
      'alice@acme.example',
      'sales-lead@acme.example',
      'alice.martin@acme.example.test-google-a.com',
    ]);
  });

  it('flattens organizations, phones, addresses and custom schemas into attribute paths', async () => {
    const alice = byEmail((await listRecordedDirectory()).users, 'alice.martin@acme.example');
    expect(alice.attributes).toMatchObject({
      primaryEmail: 'alice.martin@acme.example',
      'name.givenName': 'Alice',
      'name.familyName': 'Martin',
      'name.fullName': 'Alice Martin',
      'organizations.primary.title': 'Regional Sales Director',
      'organizations.primary.department': 'Sales',
      'phones.work': '+33 1 23 45 67 89',
      'phones.mobile': '+33 6 12 34 56 78',
      'addresses.work.formatted': '12 Rue de la Paix\n75002 Paris\nFrance',
      'relations.manager': 'ceo@acme.example',
      'externalIds.organization': 'E-1001',
      'customSchemas.Sales.Region': 'EMEA',
      'customSchemas.Sales.Quota': '1250000',
      'customSchemas.Sales.Languages': 'French, English',
      'customSchemas.Signature.ShowPhone': 'true',
      orgUnitPath: '/Sales/EMEA',
    });
    expect(alice.photo).toEqual({
      url: 'https://lh3.googleusercontent.com/a-/ALV-UjXq2d1mFz9_0aBcDeFgHiJkLmNoPqRsTuVwXyZ=s96-c',
      etag: '"Yu1r2J0SMwUrw-Gt5kXd0M5pH0E/3mFlH1wCjM6XLaJMkR5n_1YzUK0"',
    });
    const priya = byEmail((await listRecordedDirectory()).users, 'priya.nair@acme.example');
    expect(priya.attributes['phones.Reception']).toBe('+91 22 5555 0199'); // custom phone type
    expect(priya.attributes['organizations.primary.title']).toBe('Data Scientist'); // the primary one, not the first
    expect(priya.attributes['organizations.school.name']).toBe('IIT Bombay');
  });

  it('flattens only the attribute families the mapped paths lie in (compared without case)', async () => {
    const alice = byEmail((await listRecordedDirectory({}, ['Organizations.primary.title', 'customSchemas.Sales.Region'])).users, 'alice.martin@acme.example');
    expect(alice.attributes).toMatchObject({
      primaryEmail: 'alice.martin@acme.example',
      'organizations.primary.title': 'Regional Sales Director',
      'customSchemas.Sales.Region': 'EMEA',
    });
    for (const other of ['phones.work', 'addresses.work.formatted', 'relations.manager', 'externalIds.organization'])
      expect(alice.attributes).not.toHaveProperty([other]);
    // Nothing mapped: no family at all; the identity fields stay.
    const bare = byEmail((await listRecordedDirectory({}, [])).users, 'alice.martin@acme.example');
    expect(Object.keys(bare.attributes).some((k) => k.includes('.') && !k.startsWith('name.'))).toBe(false);
    expect(bare.displayName).toBe(alice.displayName);
  });

  it('keeps unicode, right-to-left and emoji names untouched', async () => {
    const { users } = await listRecordedDirectory();
    expect(byEmail(users, 'jose.nunez@acme.example')).toMatchObject({ givenName: 'José', familyName: 'Ñúñez-Gärtner' });
    expect(byEmail(users, 'layla@acme.example')).toMatchObject({ givenName: 'ليلى', familyName: 'العبدالله', displayName: 'ليلى العبدالله' });
    expect(byEmail(users, 'layla@acme.example').attributes['organizations.primary.title']).toBe('مديرة التسويق');
    expect(byEmail(users, 'noa.levi@acme.example').displayName).toBe('נועה לוי');
    expect(byEmail(users, 'misaki.sato@acme.example').displayName).toBe('Misaki 🌸 Sato');
  });

  it('leaves missing fields out of the attributes and tolerates users without organizations, phones or email', async () => {
    const { users } = await listRecordedDirectory();
    const sparse = byEmail(users, 'contractor@acme.example');
    expect(sparse).toMatchObject({ givenName: null, familyName: 'Contractor', displayName: 'Contractor', orgUnits: [], photo: null });
    expect(sparse.attributes).toEqual({ id: '116677889900112233445', primaryEmail: 'contractor@acme.example', 'name.familyName': 'Contractor' });
    const jose = byEmail(users, 'jose.nunez@acme.example');
    expect(Object.keys(jose.attributes).filter((k) => /^(organizations|phones|addresses)\./.test(k))).toEqual([]);
    const noEmail = users.find((u) => u.externalId === '117788990011223344556');
    expect(noEmail).toMatchObject({ primaryEmail: null, displayName: 'Pending Provisioning' });
  });

  it('returns duplicate emails across users as they are (deduplication is the engine’s)', async () => {
    const { users } = await listRecordedDirectory();
    const owners = users.filter((u) => u.primaryEmail === 'sales-lead@acme.example' || u.aliases.includes('sales-lead@acme.example'));
    expect(owners.map((u) => u.externalId)).toEqual(['104318735627184620012', '115566778899001122334']);
  });

  it('puts group memberships (nested and account-wide) and org unit ancestry on each user', async () => {
    const { users } = await listRecordedDirectory();
    const alice = byEmail(users, 'alice.martin@acme.example');
    expect(alice.groups).toEqual([GROUPS.allStaff, GROUPS.sales, GROUPS.salesEmea]);
    expect(alice.orgUnits).toEqual(['/Sales/EMEA', '/Sales', '/']);
    // engineering's members come on two pages; priya is on the second
    expect(byEmail(users, 'priya.nair@acme.example').groups).toEqual([GROUPS.allStaff, GROUPS.engineering]);
    expect(byEmail(users, 'jose.nunez@acme.example').orgUnits).toEqual(['/']);
  });

  it('resumes the member listing where a 429 stopped it, instead of listing every group again', async () => {
    mockTokenExchange();
    // Every page is answered once; engineering's second members page first answers 429.
    const api = nock(ADMIN_ORIGIN);
    mockGroupsAndMembers(api, undefined, true);
    api
      .get(USERS_PATH)
      .query({ ...usersQuery, pageToken: page1.nextPageToken })
      .reply(200, page2);

    const src = source();
    // The users page does not wait for the memberships; their load fails on the 429, and so does
    // the question for the page's groups, which the engine asks again.
    const page = await src.fetchUsersPage({ pageToken: page1.nextPageToken });
    expect(page.groupsPending).toBe(true);
    const layla = page.users.find((u) => u.primaryEmail === 'layla@acme.example')!;
    const ask = () => src.groupsOf!([{ externalId: layla.externalId, emails: [layla.primaryEmail!] }]);
    await expect(ask()).rejects.toBeInstanceOf(RateLimitedError);
    const groups = await ask();
    api.done(); // no members page was asked for twice, but the one that answered 429
    expect(groups.get(layla.externalId)).toEqual([GROUPS.allStaff, GROUPS.sales]);
  });

  it('returns users pages while the memberships load (groupsPending), also when resuming from a page token, and their groups once loaded', async () => {
    const order: string[] = [];
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN);
    mockGroupsAndMembers(api, order);
    api
      .get(USERS_PATH)
      .query({ ...usersQuery, pageToken: page1.nextPageToken })
      .reply(200, () => (order.push('users.list'), page2))
      .get(USERS_PATH)
      .query({ ...usersQuery, pageToken: page2.nextPageToken })
      .reply(200, page3);

    const src = source();
    const resumed = await fetchPage(src, { pageToken: page1.nextPageToken });
    const last = await fetchPage(src, { pageToken: page2.nextPageToken });
    token.done();
    api.done(); // groups and members were each fetched once, for both pages

    // The users page is read while the memberships load, not after them.
    expect([...order].sort()).toEqual(['groups.list', 'members.list', 'users.list']);
    expect(order.indexOf('groups.list')).toBeLessThan(order.indexOf('members.list'));
    expect(resumed.users.find((u) => u.primaryEmail === 'layla@acme.example')?.groups).toEqual([GROUPS.allStaff, GROUPS.sales]);
    expect(last.nextPageToken).toBeNull();
  });

  it('skips a group deleted between groups.list and members.list', async () => {
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN)
      .get('/admin/directory/v1/groups')
      .query(true)
      .reply(200, {
        groups: [
          { id: GROUPS.sales, email: 'sales@acme.example', name: 'Sales' },
          { id: GROUPS.engineering, email: 'engineering@acme.example' },
        ],
      })
      .get(`/admin/directory/v1/groups/${GROUPS.sales}/members`)
      .query(true)
      .reply(404, {
        error: {
          code: 404,
          message: 'Resource Not Found: groupKey',
          errors: [{ reason: 'notFound', domain: 'global', message: 'Resource Not Found: groupKey' }],
        },
      })
      .get(`/admin/directory/v1/groups/${GROUPS.engineering}/members`)
      .query(true)
      .reply(200, fixture('members.engineering.page2.json'))
      .get(USERS_PATH)
      .query(true)
      .reply(200, page3);
    const page = await fetchPage(source(), {});
    token.done();
    api.done();
    expect(page.users.find((u) => u.primaryEmail === 'priya.nair@acme.example')?.groups).toEqual([GROUPS.engineering]);
    expect(page.users.find((u) => u.primaryEmail === 'sales-lead@acme.example')?.groups).toEqual([]);
  });

  it('lists groups and org units (type=all, with the root) as DirectoryGroups', async () => {
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN);
    api
      .get('/admin/directory/v1/groups')
      .query({ customer: 'my_customer', maxResults: '200' })
      .reply(200, fixture('groups.list.page1.json'))
      .get('/admin/directory/v1/groups')
      .query((q) => q.pageToken !== undefined)
      .reply(200, fixture('groups.list.page2.json'))
      .get('/admin/directory/v1/customer/my_customer/orgunits')
      .query({ type: 'all' })
      .reply(200, fixture('orgunits.list.json'));
    const groups = await source().listGroups();
    token.done();
    api.done();
    expect(groups).toEqual([
      { externalId: GROUPS.sales, kind: 'group', name: 'Sales', email: 'sales@acme.example' },
      { externalId: GROUPS.engineering, kind: 'group', name: 'Engineering', email: 'engineering@acme.example' },
      { externalId: GROUPS.allStaff, kind: 'group', name: 'All staff', email: 'all-staff@acme.example' },
      { externalId: GROUPS.salesEmea, kind: 'group', name: 'Sales EMEA', email: 'sales-emea@acme.example' },
      { externalId: '/', kind: 'org_unit', name: '/', path: '/' },
      { externalId: '/Sales', kind: 'org_unit', name: 'Sales', path: '/Sales' },
      { externalId: '/Sales/EMEA', kind: 'org_unit', name: 'EMEA', path: '/Sales/EMEA' },
      { externalId: '/Engineering', kind: 'org_unit', name: 'Engineering', path: '/Engineering' },
      { externalId: '/Engineering/Platform', kind: 'org_unit', name: 'Platform', path: '/Engineering/Platform' },
      { externalId: '/Alumni', kind: 'org_unit', name: 'Alumni', path: '/Alumni' },
    ]);
  });

  it('lists one domain instead of the whole account when the config names it', async () => {
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN)
      .get('/admin/directory/v1/groups')
      .query({ domain: 'acme.example', maxResults: '200' })
      .reply(200, { kind: 'admin#directory#groups' })
      .get(USERS_PATH)
      .query({ domain: 'acme.example', maxResults: '500', projection: 'full' })
      .reply(200, { kind: 'admin#directory#users' });
    const page = await fetchPage(source({ domain: 'acme.example' }), {});
    token.done();
    api.done();
    expect(page).toEqual({ users: [], removedIds: [], skipped: [], nextPageToken: null });
  });

  it('honours base_url and token_url overrides from the config', async () => {
    let claims: Record<string, unknown> = {};
    const token = mockTokenExchange((c) => (claims = c), 'https://sandbox.sigsync.test', '/oauth2/token');
    const api = nock('https://sandbox.sigsync.test')
      .matchHeader('authorization', `Bearer ${TOKEN_RESPONSE.access_token}`)
      .get(USERS_PATH)
      .query({ customer: 'my_customer', maxResults: '1' })
      .reply(200, { users: [] });
    await source({ base_url: 'https://sandbox.sigsync.test', token_url: 'https://sandbox.sigsync.test/oauth2/token' }).checkAccess();
    token.done();
    api.done();
    expect(claims.sub).toBe(ADMIN_SUBJECT);
  });

  it('accepts an OAuth client with a refresh token, refreshed at token_url', async () => {
    const token = nock('https://sandbox.sigsync.test')
      .post('/oauth2/token', (body: unknown) => {
        const p = formBody(body);
        return (
          p.get('grant_type') === 'refresh_token' &&
          p.get('refresh_token') === '1//0g-refresh' &&
          p.get('client_id') === 'client-123.apps.googleusercontent.com'
        );
      })
      .reply(200, { access_token: 'ya29.oauth-access', expires_in: 3599, token_type: 'Bearer', scope: DIRECTORY_SCOPES.join(' ') });
    const api = nock(ADMIN_ORIGIN)
      .matchHeader('authorization', 'Bearer ya29.oauth-access')
      .get(USERS_PATH)
      .query({ customer: 'my_customer', maxResults: '1' })
      .reply(200, { users: [] });
    const src = source(
      { token_url: 'https://sandbox.sigsync.test/oauth2/token' },
      { type: 'authorized_user', client_id: 'client-123.apps.googleusercontent.com', client_secret: 'GOCSPX-secret', refresh_token: '1//0g-refresh' },
    );
    await src.checkAccess();
    token.done();
    api.done();
  });

  it('rejects credentials that are neither a service account key with a subject nor an OAuth client', () => {
    const schema = googleDirectorySource.credentialsSchema;
    expect(schema.safeParse(serviceAccountKey({ subject: undefined })).success).toBe(false);
    expect(schema.safeParse(serviceAccountKey({ private_key: 'not a key' })).success).toBe(false);
    expect(schema.safeParse({ type: 'authorized_user', client_id: 'x' }).success).toBe(false);
    expect(schema.safeParse(serviceAccountKey()).success).toBe(true);
  });

  it('keeps engine settings it does not know in the parsed config', () => {
    const config = googleDirectorySource.configSchema.parse({ deletion_guard: { max_share: 0.1 } });
    expect(config).toMatchObject({ customer: 'my_customer', deletion_guard: { max_share: 0.1 } });
  });

  describe('sync scope', () => {
    it('skips users outside the configured org units and addresses', async () => {
      const { users, skipped } = await listRecordedDirectory({ scope: { org_units: ['/Sales'], emails: ['jose.nunez@acme.example'] } });
      expect(users.map((u) => u.primaryEmail)).toEqual([
        'alice.martin@acme.example', // /Sales/EMEA, a sub-unit
        'jose.nunez@acme.example', // by address
        'layla@acme.example',
        'sales-lead@acme.example',
      ]);
      expect(skipped).toHaveLength(expected.length - 4);
      expect(new Set(skipped.map((s) => s.reason))).toEqual(new Set(['out_of_scope']));
    });

    it('keeps only members of the configured groups, by email or alias', async () => {
      const { users } = await listRecordedDirectory({ scope: { groups: ['engineering@acme.example'] } });
      expect(users.map((u) => u.primaryEmail)).toEqual(['bob.stone@acme.example', 'misaki.sato@acme.example', 'priya.nair@acme.example']);
      const everyone = await listRecordedDirectory({ scope: { groups: ['everyone@acme.example'] } });
      expect(everyone.users).toHaveLength(expected.length);
    });
  });
});
