/**
 * An emulated Microsoft 365 tenant on loopback, over HTTPS with a certificate generated at start:
 * the Entra ID token endpoint (with its OpenID configuration and AADSTS errors), Graph v1.0
 * `/users` ($select, $top ≤ 999, @odata.nextLink paging), `/users/delta` with real deltaLink
 * semantics (a change log: a token replays every change made after it was issued, `$deltatoken=latest`
 * starts from now, `expireDeltaTokens()` makes older tokens answer 410), `/groups` with
 * `transitiveMembers`, a user's `transitiveMemberOf`, photos, a mailbox's settings with its purpose (`shared` for a
 * shared mailbox, which Entra lists as a disabled user), and the beta mailbox configuration item OWA.UserOptions
 * (get, create, update) in which Outlook on the web keeps its signature.
 *
 * The certificate is trusted only by clients given `emulator.caCert`: point an integration at it with
 * `microsoftIntegrationConfig(emulator)` (base_url, beta_url, token_url and ca_cert).
 */
import crypto from 'node:crypto';
import { defaultKnobs, parseBody, serve, type EmulatorServer, type Knobs, type Reply, type Route } from './http.ts';
import { selfSignedCert } from './tls.ts';
import { userTokenIssuer, type UserTokenClaims } from './microsoftUserTokens.ts';
import { graphError, mailboxRoutes } from './microsoftMailbox.ts';
import {
  generateMicrosoftTenant,
  primaryOf,
  project,
  selectOf,
  transitiveMemberOf,
  transitiveMembersCache,
  type GraphUserRaw,
  type MicrosoftTenant,
} from './microsoftTenant.ts';

export {
  generateMicrosoftTenant,
  microsoftUserId,
  type GraphGroupRaw,
  type GraphUserRaw,
  type MicrosoftTenant,
  type StructuredEntry,
} from './microsoftTenant.ts';

/** An Entra ID token endpoint error, the way login.microsoftonline.com words it. */
function aadsts(status: number, error: string, code: number, description: string): Reply {
  const trace = crypto.randomUUID();
  const correlation = crypto.randomUUID();
  const timestamp = new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z';
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${code}: ${description} Trace ID: ${trace} Correlation ID: ${correlation} Timestamp: ${timestamp}`,
      error_codes: [code],
      timestamp,
      trace_id: trace,
      correlation_id: correlation,
    },
  };
}

type Change = { seq: number; id: string };

export interface MicrosoftEmulator extends EmulatorServer {
  tenant: MicrosoftTenant;
  /** PEM certificate of the emulator: the only thing a client needs to trust it. */
  caCert: string;
  /** Each mailbox's current OWA signature HTML, by primary address (lowercase). */
  signatures(): Record<string, string>;
  /** Configuration item writes (create or update) per primary address. */
  writes: Map<string, number>;
  addUser(user: GraphUserRaw): void;
  /** Changes properties of a user; the change is recorded for delta. */
  updateUser(id: string, patch: Partial<GraphUserRaw>): void;
  /** Deletes a user; delta reports it as `@removed: deleted`. */
  removeUser(id: string): void;
  /** Makes every delta token issued so far answer 410 Gone (as an expired token does after 7 days). */
  expireDeltaTokens(): void;
  /** A signed-in user's access token for the Outlook add-in's app (what Office SSO returns). */
  issueUserToken(claims: UserTokenClaims): Promise<string>;
}

/** Integration config pointing a Microsoft integration at the emulator. */
export function microsoftIntegrationConfig(emulator: Pick<MicrosoftEmulator, 'url' | 'caCert'>): Record<string, string> {
  return { base_url: `${emulator.url}/v1.0`, beta_url: `${emulator.url}/beta`, token_url: emulator.url, ca_cert: emulator.caCert };
}

/** The emulated tenant's client credentials. */
export function microsoftCredentials(tenant: Pick<MicrosoftTenant, 'tenantId' | 'clientId' | 'clientSecret'>) {
  return { tenant_id: tenant.tenantId, client_id: tenant.clientId, client_secret: tenant.clientSecret };
}

const DEFAULT_PAGE = 100;
const DELTA_PAGE = 200;

/** Writes and reads of an emulated Graph tenant's state, shared by its routes. */
class GraphState {
  readonly writes = new Map<string, number>();
  readonly changes: Change[] = [];
  seq = 0;
  /** Delta tokens issued before this sequence number are expired. */
  oldestValidSeq = 0;
  readonly tokens = new Set<string>();
  base = '';
  /** API requests so far (the token endpoint expires secrets from `knobs.revokeAtRequest` on). */
  requests: () => number = () => 0;
  readonly membersOfGroup: (groupId: string) => { id: string; type: string }[];
  // Users by id, user principal name and mail (lowercase), rebuilt after any change to the tenant.
  #userIndex: { version: string; byKey: Map<string, GraphUserRaw> } | undefined;

  readonly tenant: MicrosoftTenant;
  readonly knobs: Knobs;

  constructor(tenant: MicrosoftTenant, knobs: Knobs) {
    this.tenant = tenant;
    this.knobs = knobs;
    this.membersOfGroup = transitiveMembersCache(tenant);
  }

  record = (id: string) => this.changes.push({ seq: ++this.seq, id });

  findUser = (key: string): GraphUserRaw | undefined => {
    const version = `${this.seq}:${this.tenant.users.length}`;
    if (this.#userIndex?.version !== version) {
      const byKey = new Map<string, GraphUserRaw>();
      for (const u of [...this.tenant.users].reverse()) for (const k of [u.mail, u.userPrincipalName, u.id]) if (k) byKey.set(k.toLowerCase(), u);
      this.#userIndex = { version, byKey };
    }
    return this.#userIndex.byKey.get(decodeURIComponent(key).toLowerCase());
  };

  countWrite = (u: GraphUserRaw) => this.writes.set(primaryOf(u), (this.writes.get(primaryOf(u)) ?? 0) + 1);

  link = (path: string, params: Record<string, string>) =>
    `${this.base}${path}?${Object.entries(params)
      .map(([k, v]) => `${k}=${v}`)
      .join('&')}`;

  deltaLink = (select: string) => this.link('/v1.0/users/delta', { ...(select ? { $select: select } : {}), $deltatoken: encode({ s: this.seq }) });

  checkBearer = (auth: string | undefined): Reply | null => {
    const token = /^Bearer (.+)$/.exec(auth ?? '')?.[1];
    if (!token || !this.tokens.has(token)) return graphError(401, 'InvalidAuthenticationToken', 'Access token validation failure. Invalid audience.');
    return null;
  };

  /** One page of a collection: `$top` (≤ 999) items from the `$skiptoken` offset, and the next link. */
  collectionPage = <T>(url: URL, all: T[], path: string, select: string): { slice: T[]; next: { '@odata.nextLink'?: string } } => {
    const top = Math.min(Number(url.searchParams.get('$top') ?? DEFAULT_PAGE) || DEFAULT_PAGE, 999);
    const skip = url.searchParams.get('$skiptoken');
    const offset = skip ? Number(decode(skip)?.o ?? 0) : 0;
    const more = offset + top < all.length;
    return {
      slice: all.slice(offset, offset + top),
      next: more ? { '@odata.nextLink': this.link(path, { $select: select, $top: String(top), $skiptoken: encode({ o: offset + top }) }) } : {},
    };
  };
}

const encode = (o: Record<string, unknown>) => Buffer.from(JSON.stringify(o)).toString('base64url');

const decode = (s: string): Record<string, unknown> | null => {
  try {
    return JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return null;
  }
};

/** The Entra ID token endpoint and its OpenID configuration. */
function authRoutes(st: GraphState): Route[] {
  const { tenant } = st;
  return [
    {
      method: 'GET',
      pattern: /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/,
      name: 'openid-configuration',
      control: true,
      handler: (_c, m) => ({
        status: 200,
        body: {
          token_endpoint: `${st.base}/${m[1]}/oauth2/v2.0/token`,
          authorization_endpoint: `${st.base}/${m[1]}/oauth2/v2.0/authorize`,
          issuer: `${st.base}/${m[1]}/v2.0`,
          jwks_uri: `${st.base}/${m[1]}/discovery/v2.0/keys`,
          token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
          response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        },
      }),
    },
    {
      method: 'POST',
      pattern: /^\/([^/]+)\/oauth2\/v2\.0\/token$/,
      name: 'token',
      control: true,
      handler: ({ body }, m) => {
        const form = parseBody(body);
        if (decodeURIComponent(m[1]!) !== tenant.tenantId) return aadsts(400, 'invalid_request', 90002, `Tenant '${m[1]}' not found.`);
        if (form.grant_type !== 'client_credentials') return aadsts(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
        if (form.client_id !== tenant.clientId) {
          return aadsts(
            400,
            'unauthorized_client',
            700016,
            `Application with identifier '${form.client_id}' was not found in the directory '${tenant.tenantId}'.`,
          );
        }
        if (form.client_secret !== tenant.clientSecret) return aadsts(401, 'invalid_client', 7000215, 'Invalid client secret provided.');
        if (st.knobs.revokeAtRequest !== null && st.requests() + 1 >= st.knobs.revokeAtRequest) {
          return aadsts(401, 'invalid_client', 7000222, `The provided client secret keys for app '${tenant.clientId}' are expired.`);
        }
        const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.${crypto.randomBytes(24).toString('base64url')}.sandbox`;
        st.tokens.add(token);
        return { status: 200, body: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token } };
      },
    },
  ];
}

/** Graph users: the paged listing and photos. */
function userRoutes(st: GraphState): Route[] {
  const { tenant } = st;
  return [
    {
      method: 'GET',
      pattern: /^\/v1\.0\/users$/,
      name: 'users.list',
      handler: ({ url, req }) => {
        const denied = st.checkBearer(req.headers.authorization);
        if (denied) return denied;
        const top = Number(url.searchParams.get('$top') ?? DEFAULT_PAGE);
        if (!Number.isInteger(top) || top < 1 || top > 999)
          return graphError(400, 'Request_UnsupportedQuery', 'Invalid page size specified: ' + String(top) + '. Must be between 1 and 999 inclusive.');
        const skip = url.searchParams.get('$skiptoken');
        const offset = skip ? Number(decode(skip)?.o ?? NaN) : 0;
        if (!Number.isInteger(offset)) return graphError(400, 'Directory_InvalidPagingToken', 'The specified paging token is invalid.');
        const select = selectOf(url);
        const slice = tenant.users.slice(offset, offset + top);
        const next =
          offset + top < tenant.users.length
            ? st.link('/v1.0/users', {
                ...(url.searchParams.get('$select') ? { $select: url.searchParams.get('$select')! } : {}),
                $top: String(top),
                $skiptoken: encode({ o: offset + top }),
              })
            : undefined;
        return {
          status: 200,
          body: {
            '@odata.context': `${st.base}/v1.0/$metadata#users`,
            ...(next ? { '@odata.nextLink': next } : {}),
            value: slice.map((u) => project(u, select)),
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\.0\/users\/([^/]+)\/photo\/(?:\$|%24)value$/,
      name: 'photo.get',
      handler: ({ req }, m) => {
        const denied = st.checkBearer(req.headers.authorization);
        if (denied) return denied;
        const u = st.findUser(m[1]!);
        if (!u)
          return graphError(
            404,
            'Request_ResourceNotFound',
            `Resource '${decodeURIComponent(m[1]!)}' does not exist or one of its queried reference-property objects are not present.`,
          );
        if (!u.hasPhoto)
          return graphError(404, 'ImageNotFound', "Exception of type 'Microsoft.Fast.Profile.Core.Exception.ImageNotFoundException' was thrown.");
        const data = crypto.createHash('sha256').update(u.id).digest();
        return { status: 200, raw: data, headers: { 'content-type': 'image/jpeg', etag: `"${data.subarray(0, 6).toString('hex')}"` } };
      },
    },
  ];
}

/** Graph `/users/delta`: a round is a list of user ids (current state) or removals, paged by $skiptoken. */
function deltaRoute(st: GraphState): Route {
  const { tenant } = st;
  return {
    method: 'GET',
    pattern: /^\/v1\.0\/users\/delta$/,
    name: 'users.delta',
    handler: ({ url, req }) => {
      const denied = st.checkBearer(req.headers.authorization);
      if (denied) return denied;
      const selectParam = url.searchParams.get('$select') ?? '';
      const select = selectOf(url);
      const deltaToken = url.searchParams.get('$deltatoken');
      const skipToken = url.searchParams.get('$skiptoken');
      if (deltaToken === 'latest')
        return { status: 200, body: { '@odata.context': `${st.base}/v1.0/$metadata#users`, '@odata.deltaLink': st.deltaLink(selectParam), value: [] } };
      // A round is a list of user ids (current state) or removals, paged by $skiptoken {o, s: since, e: end seq}.
      let since: number | null = null;
      let end = st.seq;
      let offset = 0;
      if (deltaToken) {
        const t = decode(deltaToken);
        if (typeof t?.s !== 'number') return graphError(400, 'BadRequest', 'Invalid delta token.');
        since = t.s;
      } else if (skipToken) {
        const t = decode(skipToken);
        if (typeof t?.o !== 'number' || typeof t.e !== 'number')
          return graphError(400, 'Directory_InvalidPagingToken', 'The specified paging token is invalid.');
        since = typeof t.s === 'number' ? t.s : null;
        end = t.e;
        offset = t.o;
      }
      if (since !== null && since < st.oldestValidSeq) {
        return graphError(
          410,
          'SyncStateNotFound',
          'The sync state generation is not found. Resync required: replace any local cached copies with a full synchronization.',
          { location: st.link('/v1.0/users/delta', selectParam ? { $select: selectParam } : {}) },
        );
      }
      // Only the page's users are projected (a round over every user pages through the tenant).
      let total: number;
      let slice: Record<string, unknown>[];
      if (since === null) {
        total = tenant.users.length;
        slice = tenant.users.slice(offset, offset + DELTA_PAGE).map((u) => project(u, select));
      } else {
        const ids = [...new Set(st.changes.filter((c) => c.seq > since && c.seq <= end).map((c) => c.id))];
        total = ids.length;
        slice = ids.slice(offset, offset + DELTA_PAGE).map((id) => {
          const u = st.findUser(id);
          return u && u.id === id ? project(u, select) : { id, '@removed': { reason: 'deleted' } };
        });
      }
      const more = offset + DELTA_PAGE < total;
      const tail = more
        ? {
            '@odata.nextLink': st.link('/v1.0/users/delta', {
              ...(selectParam ? { $select: selectParam } : {}),
              $skiptoken: encode({ o: offset + DELTA_PAGE, e: end, ...(since === null ? {} : { s: since }) }),
            }),
          }
        : { '@odata.deltaLink': st.link('/v1.0/users/delta', { ...(selectParam ? { $select: selectParam } : {}), $deltatoken: encode({ s: end }) }) };
      return { status: 200, body: { '@odata.context': `${st.base}/v1.0/$metadata#users`, ...tail, value: slice } };
    },
  };
}

/** Graph groups, their transitive members, and a user's transitive groups. */
function groupRoutes(st: GraphState): Route[] {
  const { tenant } = st;
  return [
    {
      method: 'GET',
      pattern: /^\/v1\.0\/groups$/,
      name: 'groups.list',
      handler: ({ url, req }) => {
        const denied = st.checkBearer(req.headers.authorization);
        if (denied) return denied;
        const p = st.collectionPage(url, tenant.groups, '/v1.0/groups', url.searchParams.get('$select') ?? 'id');
        return { status: 200, body: { ...p.next, value: p.slice.map((g) => ({ id: g.id, displayName: g.displayName, mail: g.mail ?? null })) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\.0\/groups\/([^/]+)\/transitiveMembers$/,
      name: 'groups.transitiveMembers',
      handler: ({ url, req }, m) => {
        const denied = st.checkBearer(req.headers.authorization);
        if (denied) return denied;
        const id = decodeURIComponent(m[1]!);
        if (!tenant.groups.some((g) => g.id === id))
          return graphError(
            404,
            'Request_ResourceNotFound',
            `Resource '${id}' does not exist or one of its queried reference-property objects are not present.`,
          );
        const p = st.collectionPage(url, st.membersOfGroup(id), `/v1.0/groups/${id}/transitiveMembers`, 'id');
        return { status: 200, body: { ...p.next, value: p.slice.map((o) => ({ '@odata.type': o.type, id: o.id })) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\.0\/users\/([^/]+)\/transitiveMemberOf$/,
      name: 'users.transitiveMemberOf',
      handler: ({ url, req }, m) => {
        const denied = st.checkBearer(req.headers.authorization);
        if (denied) return denied;
        const u = st.findUser(m[1]!);
        if (!u)
          return graphError(
            404,
            'Request_ResourceNotFound',
            `Resource '${decodeURIComponent(m[1]!)}' does not exist or one of its queried reference-property objects are not present.`,
          );
        const p = st.collectionPage(url, transitiveMemberOf(tenant, u.id), `/v1.0/users/${u.id}/transitiveMemberOf`, 'id');
        return { status: 200, body: { ...p.next, value: p.slice.map((id) => ({ '@odata.type': '#microsoft.graph.group', id })) } };
      },
    },
  ];
}

export async function startMicrosoftEmulator(tenant: MicrosoftTenant = generateMicrosoftTenant(25), knobs: Knobs = defaultKnobs()): Promise<MicrosoftEmulator> {
  const tls = selfSignedCert('sigsync sandbox: Microsoft Graph');
  const st = new GraphState(tenant, knobs);
  const userTokens = userTokenIssuer(tenant.tenantId, () => st.base);
  const server = await serve(
    [
      ...authRoutes(st),
      ...userTokens.routes,
      ...userRoutes(st),
      deltaRoute(st),
      ...groupRoutes(st),
      ...mailboxRoutes({ tenant, base: () => st.base, checkBearer: st.checkBearer, findUser: st.findUser, onWrite: st.countWrite }),
    ],
    {
      tls,
      revokedReply: () => graphError(401, 'InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.'),
      rateLimitedReply: (s) => graphError(429, 'TooManyRequests', 'Too many requests.', { 'retry-after': String(s) }),
      faultReply: () => graphError(503, 'serviceNotAvailable', 'The service is temporarily unavailable.'),
      malformedReply: () => ({ status: 200, body: { value: [{ id: 42, displayName: ['not', 'a', 'string'] }] } }),
    },
    knobs,
  );
  st.base = server.url;
  st.requests = () => server.counters.requests;

  return Object.assign(server, {
    tenant,
    caCert: tls.cert,
    writes: st.writes,
    signatures() {
      const out: Record<string, string> = {};
      for (const [id, entries] of tenant.mailboxes) {
        const u = tenant.users.find((x) => x.id === id);
        const html = entries.find((e) => e.keyEntry.values[0]?.toLowerCase() === 'signaturehtml')?.valueEntry.values[0];
        if (u && html !== undefined) out[primaryOf(u)] = html;
      }
      return out;
    },
    addUser(user: GraphUserRaw) {
      tenant.users.push(user);
      st.record(user.id);
    },
    updateUser(id: string, patch: Partial<GraphUserRaw>) {
      const u = tenant.users.find((x) => x.id === id);
      if (!u) throw new Error(`no Microsoft user ${id}`);
      Object.assign(u, patch, { id });
      st.record(id);
    },
    removeUser(id: string) {
      const i = tenant.users.findIndex((x) => x.id === id);
      if (i < 0) throw new Error(`no Microsoft user ${id}`);
      tenant.users.splice(i, 1);
      for (const g of tenant.groups) g.members = g.members.filter((m) => m !== id);
      st.record(id);
    },
    issueUserToken: (claims: UserTokenClaims) => userTokens.issue(claims),
    expireDeltaTokens() {
      st.oldestValidSeq = st.seq + 1;
      // Every token issued so far carries a sequence number ≤ seq; bump seq so new ones are valid.
      st.seq++;
    },
  });
}
