/**
 * Shared test setup for the Microsoft connectors: fixtures, the token endpoint, group mocks.
 */
import nock from 'nock';
import { fixtureReader } from '../helpers.ts';
import { microsoftConfigSchema, type MicrosoftCredentials } from '../../../connectors/microsoft/schemas.ts';

export const GRAPH = 'https://graph.microsoft.com';
export const LOGIN = 'https://login.microsoftonline.com';
export const EXT = 'extension_b7d8e648520f41d3b9c0fdeb91768a0a_costCenter';
export const CREDENTIALS: MicrosoftCredentials = {
  tenant_id: 'contoso-tenant-0001',
  client_id: '6731de76-14a6-49ae-97bc-6eba6914391e',
  client_secret: 'Qx8~SECRET-client-secret-value.Zz1',
};

export const fixture = fixtureReader('microsoft');

/** The users' $select of a source configured with the EXT extension attribute. */
export const SELECT = `id,displayName,givenName,surname,jobTitle,department,companyName,mail,userPrincipalName,businessPhones,mobilePhone,officeLocation,proxyAddresses,accountEnabled,${EXT}`;

export const ACCESS_TOKEN = fixture<{ access_token: string }>('token.json').access_token;

export function uid(n: number): string {
  return `a1b2c3d4-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

export function config(extra: Record<string, unknown> = {}) {
  return microsoftConfigSchema.parse(extra);
}

/**
 * The token endpoint. For the public cloud MSAL knows the endpoints; any other authority host is
 * asked for its OpenID configuration first.
 */
export function tokenScope(host = LOGIN, reply: [number, unknown] = [200, fixture('token.json')]): nock.Scope {
  const scope = nock(host);
  if (host !== LOGIN) {
    scope.get(`/${CREDENTIALS.tenant_id}/v2.0/.well-known/openid-configuration`).reply(200, {
      token_endpoint: `${host}/${CREDENTIALS.tenant_id}/oauth2/v2.0/token`,
      authorization_endpoint: `${host}/${CREDENTIALS.tenant_id}/oauth2/v2.0/authorize`,
      issuer: `${host}/${CREDENTIALS.tenant_id}/v2.0`,
      jwks_uri: `${host}/${CREDENTIALS.tenant_id}/discovery/v2.0/keys`,
    });
  }
  scope
    .post(
      `/${CREDENTIALS.tenant_id}/oauth2/v2.0/token`,
      (body: Record<string, string>) => body.client_id === CREDENTIALS.client_id && body.grant_type === 'client_credentials',
    )
    .query(true)
    .reply(reply[0], reply[1] as nock.Body);
  return scope;
}

/** A token endpoint failure the way Entra ID answers it. */
export function aadstsError(error: string, code: number, description: string) {
  return {
    error,
    error_description: `AADSTS${code}: ${description}\r\nTrace ID: 0b6b7a3e-1a2b\r\nCorrelation ID: 5d1c\r\nTimestamp: 2026-11-20 10:00:00Z`,
    error_codes: [code],
    timestamp: '2026-11-20 10:00:00Z',
    trace_id: '0b6b7a3e-1a2b',
    correlation_id: '5d1c',
    error_uri: `${LOGIN}/error?code=${code}`,
  };
}

/** The fixture groups and their transitive members (three member pages). */
/** The group list alone, as a delta round asks for it. */
export function mockGroupList(scope: nock.Scope): nock.Scope {
  return scope.get('/v1.0/groups').query({ $select: 'id,displayName,mail', $top: '999' }).reply(200, fixture('groups.json'));
}

/** One user's transitive memberships, as a delta round asks for each changed user's; a directory role among them is ignored. */
export function mockMemberOf(scope: nock.Scope, userId: string, groupIds: string[]): nock.Scope {
  return scope
    .get(`/v1.0/users/${userId}/transitiveMemberOf`)
    .query({ $select: 'id', $top: '999' })
    .reply(200, {
      value: [
        ...groupIds.map((id) => ({ '@odata.type': '#microsoft.graph.group', id })),
        { '@odata.type': '#microsoft.graph.directoryRole', id: 'r-global-reader' },
      ],
    });
}

/**
 * The group list and every group's transitive members, as a full listing asks for them; with
 * `throttled`, All staff's second members page first answers 429.
 */
export function mockGroups(scope: nock.Scope, throttled = false): nock.Scope {
  mockGroupList(scope)
    .get('/v1.0/groups/g-sales-0001/transitiveMembers')
    .query({ $select: 'id', $top: '999' })
    .reply(200, fixture('groups.g-sales-0001.members.json'))
    .get('/v1.0/groups/g-all-0002/transitiveMembers')
    .query({ $select: 'id', $top: '999' })
    .reply(200, fixture('groups.g-all-0002.members.page1.json'));
  const allStaffPage2 = () => scope.get('/v1.0/groups/g-all-0002/transitiveMembers').query({ $select: 'id', $top: '999', $skiptoken: 'TWVtYmVyc18y' });
  if (throttled) allStaffPage2().reply(429, graphErrorBody('TooManyRequests', 'Too many requests'), { 'Retry-After': '1' });
  return allStaffPage2().reply(200, fixture('groups.g-all-0002.members.page2.json'));
}

/**
 * A mailbox's purpose (mailboxSettings.userPurpose), asked for each disabled account with a mailbox;
 * `reply` is the purpose, or a status and body (a 403 without MailboxSettings.Read, a 404 without a mailbox).
 */
export function mockPurpose(scope: nock.Scope, userId: string, reply: string | [number, unknown]): nock.Scope {
  const i = scope.get(`/v1.0/users/${userId}/mailboxSettings/userPurpose`);
  return typeof reply === 'string'
    ? i.reply(200, { '@odata.context': `${GRAPH}/v1.0/$metadata#users('${userId}')/mailboxSettings/userPurpose`, value: reply })
    : i.reply(reply[0], reply[1] as nock.Body);
}

export function graphErrorBody(code: string, message: string) {
  return { error: { code, message, innerError: { date: '2026-11-20T10:00:00', 'request-id': 'r-1', 'client-request-id': 'c-1' } } };
}

/** The three fixture pages of /users, with the "sync from now" delta call before them; Dan (disabled) is no shared mailbox. */
export function mockFullListing(scope: nock.Scope, order: string[] = []): nock.Scope {
  return mockPurpose(scope, uid(4), 'user')
    .get('/v1.0/users/delta')
    .query({ $select: SELECT, $deltatoken: 'latest' })
    .reply(200, () => (order.push('latest'), fixture('users.delta.latest.json')))
    .get('/v1.0/users')
    .query({ $select: SELECT, $top: '999' })
    .reply(200, () => (order.push('page1'), fixture('users.page1.json')))
    .get('/v1.0/users')
    .query({ $select: SELECT, $top: '999', $skiptoken: 'RFNwdAIAAQAAACpVc2VyXzAwMDM' })
    .reply(200, () => (order.push('page2'), fixture('users.page2.json')))
    .get('/v1.0/users')
    .query({ $select: SELECT, $top: '999', $skiptoken: 'RFNwdAIAAQAAACpVc2VyXzAwMDY' })
    .reply(200, () => (order.push('page3'), fixture('users.page3.json')));
}
