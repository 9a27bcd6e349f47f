/**
 * An emulated Google Workspace tenant on loopback: the OAuth token endpoint, Admin SDK Directory
 * (users.list with maxResults ≤ 500 and pageToken paging, groups and members, org units, photos)
 * and Gmail sendAs (list and patch), answering in Google's shapes, including its error bodies and
 * 429 with Retry-After past the quota. Point an integration at it with config
 * `{ "base_url": url + "/", "token_url": url + "/token" }`.
 *
 * The token endpoint checks a service account's signed JWT as Google does when the tenant lists
 * its service accounts (`serviceAccounts`: client email -> public key): an unknown account and a
 * signature the key does not verify are refused with Google's `invalid_grant` answers. A tenant
 * without that list (the sandbox's) accepts any assertion.
 */
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { z } from 'zod';
import type { GmailSendAs, GoogleGroup, GoogleOrgUnit, GoogleUser } from '../connectors/google/schemas.ts';
import { defaultKnobs, listIndex, parseBody, serve, type EmulatorServer, type Knobs, type Reply, type Route } from './http.ts';

/** A Directory user as the tenant holds it: the connector's `GoogleUser`, with the fields every user has. */
export type GoogleUserRaw = GoogleUser & { primaryEmail: string; name: NonNullable<GoogleUser['name']> };

/** A group (the connector's `GoogleGroup`) and the ids of its members. */
export type GoogleGroupRaw = GoogleGroup & { email: string; name: string; members: string[] };

/** A send-as address (the connector's `GmailSendAs`) as Gmail keeps it for a mailbox. */
export type SendAs = GmailSendAs & {
  displayName: string;
  isPrimary: boolean;
  isDefault: boolean;
  signature: string;
  verificationStatus: 'accepted' | 'pending';
};

export interface GoogleTenant {
  users: GoogleUserRaw[];
  groups: GoogleGroupRaw[];
  orgUnits: (z.infer<typeof GoogleOrgUnit> & { name: string; orgUnitId: string; parentOrgUnitPath: string })[];
  /** sendAs settings per mailbox (lowercase primary address). */
  sendAs: Map<string, SendAs[]>;
  /** Users without Gmail (failedPrecondition "Mail service not enabled"). */
  noMailbox: Set<string>;
  /** The service accounts whose keys the token endpoint checks (client email -> public key PEM); absent: any is accepted. */
  serviceAccounts?: Map<string, string>;
}

const DEPARTMENTS = ['Sales', 'Engineering', 'Marketing', 'Support', 'Finance'];
const TITLES = ['Account Executive', 'Software Engineer', 'Product Marketer', 'Support Specialist', 'Analyst'];

/** A deterministic directory of `n` users across five departments and org units. */
export function generateGoogleTenant(n: number, domain = 'example.test'): GoogleTenant {
  const users: GoogleUserRaw[] = [];
  for (let i = 0; i < n; i++) {
    const d = i % DEPARTMENTS.length;
    users.push({
      id: String(100000000000000000000n + BigInt(i)),
      primaryEmail: `user${i}@${domain}`,
      name: { givenName: `Given${i}`, familyName: `Family${i}`, fullName: `Given${i} Family${i}` },
      suspended: false,
      archived: false,
      aliases: i % 10 === 0 ? [`alias${i}@${domain}`] : [],
      orgUnitPath: `/${DEPARTMENTS[d]}`,
      organizations: [{ title: TITLES[d], department: DEPARTMENTS[d], primary: true }],
      phones: [{ value: `+1 555 01${String(i % 10000).padStart(4, '0')}`, type: 'work' }],
    });
  }
  const groups = DEPARTMENTS.map((dep, d) => ({
    id: `group-${d}`,
    email: `${dep.toLowerCase()}@${domain}`,
    name: dep,
    members: users.filter((_, i) => i % DEPARTMENTS.length === d).map((u) => u.id),
  }));
  const orgUnits = DEPARTMENTS.map((dep, d) => ({ orgUnitPath: `/${dep}`, name: dep, orgUnitId: `id:ou${d}`, parentOrgUnitPath: '/' }));
  return { users, groups, orgUnits, sendAs: new Map(), noMailbox: new Set() };
}

const googleError = (code: number, message: string, reason: string, extra: Record<string, string> = {}): Reply => ({
  status: code,
  body: { error: { code, message, errors: [{ domain: 'global', reason, message }], status: extra.status } },
  ...(extra.retryAfter ? { headers: { 'retry-after': extra.retryAfter } } : {}),
});

function page<T>(items: T[], url: URL, max: number, defaultSize: number): { slice: T[]; next?: string } {
  const size = Math.min(Number(url.searchParams.get('maxResults') ?? defaultSize) || defaultSize, max);
  const token = url.searchParams.get('pageToken');
  const offset = token ? Number(Buffer.from(token, 'base64url').toString().slice(2)) : 0;
  const slice = items.slice(offset, offset + size);
  const next = offset + size < items.length ? Buffer.from(`o:${offset + size}`).toString('base64url') : undefined;
  return { slice, ...(next ? { next } : {}) };
}

/** Users by id and by primary address (lowercase), as a userKey in a URL path names them. */
function userIndex(tenant: GoogleTenant) {
  const lookup = listIndex(
    () => tenant.users,
    (u) => [`id:${u.id}`, u.primaryEmail.toLowerCase()],
  );
  return {
    byId: (id: string) => lookup([`id:${id}`], (u) => u.id === id),
    find: (key: string): GoogleUserRaw | undefined => {
      const email = decodeURIComponent(key).toLowerCase();
      return lookup([`id:${key}`, email], (u) => u.id === key || u.primaryEmail.toLowerCase() === email);
    },
  };
}

export interface GoogleEmulator extends EmulatorServer {
  tenant: GoogleTenant;
  /** Each mailbox's current signature (sendAs of the primary address). */
  signatures(): Record<string, string>;
  /** sendAs patches received, per address. */
  writes: Map<string, number>;
  /** Emits 'write' (address, signature html) for every sendAs signature patch. */
  events: EventEmitter;
}

interface GoogleState {
  tenant: GoogleTenant;
  knobs: Knobs;
  index: ReturnType<typeof userIndex>;
  writes: Map<string, number>;
  events: EventEmitter;
  /** API requests so far (the token endpoint revokes from `knobs.revokeAtRequest` on). */
  requests: () => number;
}

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** Google's answer to a JWT-bearer assertion the tenant's service accounts do not sign, or null when one does. */
function refusedAssertion(assertion: string | undefined, accounts: Map<string, string>): Reply | null {
  const invalid = (description: string): Reply => ({ status: 400, body: { error: 'invalid_grant', error_description: description } });
  const [header, payload, signature] = (assertion ?? '').split('.');
  if (!header || !payload || !signature) return invalid('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
  let iss: unknown;
  try {
    iss = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown }).iss;
  } catch {
    return invalid('Invalid JWT Signature.');
  }
  const key = typeof iss === 'string' ? accounts.get(iss) : undefined;
  if (!key) return invalid('Invalid grant: account not found');
  const signed = crypto.verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'));
  return signed ? null : invalid('Invalid JWT Signature.');
}

function tokenRoute({ tenant, knobs, requests }: GoogleState): Route {
  return {
    method: 'POST',
    pattern: /^\/token$/,
    name: 'token',
    control: true,
    handler: ({ body }) => {
      const form = parseBody(body);
      if (!form.grant_type) return { status: 400, body: { error: 'invalid_request', error_description: 'Missing grant_type' } };
      if (tenant.serviceAccounts && form.grant_type === JWT_BEARER) {
        const refused = refusedAssertion(form.assertion, tenant.serviceAccounts);
        if (refused) return refused;
      }
      if (knobs.revokeAtRequest !== null && requests() + 1 >= knobs.revokeAtRequest) {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } };
      }
      return { status: 200, body: { access_token: `ya29.${crypto.randomUUID()}`, expires_in: 3599, token_type: 'Bearer' } };
    },
  };
}

/** Admin SDK Directory: users (paged), photos, groups and their members (paged), org units. */
function directoryRoutes({ tenant, index }: GoogleState): Route[] {
  const findUser = (key: string) => index.find(key);
  return [
    {
      method: 'GET',
      pattern: /^\/admin\/directory\/v1\/users$/,
      name: 'users.list',
      handler: ({ url }) => {
        if (!url.searchParams.get('customer') && !url.searchParams.get('domain')) return googleError(400, 'Bad Request', 'badRequest');
        const p = page(tenant.users, url, 500, 100);
        return { status: 200, body: { kind: 'admin#directory#users', etag: '"e"', users: p.slice, ...(p.next ? { nextPageToken: p.next } : {}) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/admin\/directory\/v1\/users\/([^/]+)\/photos\/thumbnail$/,
      name: 'users.photos.get',
      handler: (_c, m) => {
        const u = findUser(m[1]!);
        if (!u?.thumbnailPhotoUrl) return googleError(404, 'Resource Not Found: userKey', 'notFound');
        const data = crypto.createHash('sha256').update(u.id).digest();
        return {
          status: 200,
          body: {
            kind: 'admin#directory#user#photo',
            id: u.id,
            primaryEmail: u.primaryEmail,
            mimeType: 'image/png',
            photoData: data.toString('base64url'),
            etag: u.thumbnailPhotoEtag ?? '"p1"',
            height: 96,
            width: 96,
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: /^\/admin\/directory\/v1\/groups$/,
      name: 'groups.list',
      handler: ({ url }) => {
        const p = page(
          tenant.groups.map((g) => ({ kind: 'admin#directory#group', id: g.id, email: g.email, name: g.name, directMembersCount: String(g.members.length) })),
          url,
          200,
          200,
        );
        return { status: 200, body: { kind: 'admin#directory#groups', groups: p.slice, ...(p.next ? { nextPageToken: p.next } : {}) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/admin\/directory\/v1\/groups\/([^/]+)\/members$/,
      name: 'members.list',
      handler: ({ url }, m) => {
        const g = tenant.groups.find((x) => x.id === decodeURIComponent(m[1]!) || x.email === decodeURIComponent(m[1]!));
        if (!g) return googleError(404, 'Resource Not Found: groupKey', 'notFound');
        const p = page(g.members, url, 200, 200);
        const members = p.slice.map((id) => {
          const u = index.byId(id);
          return { kind: 'admin#directory#member', id, email: u?.primaryEmail, role: 'MEMBER', type: 'USER', status: 'ACTIVE' };
        });
        return { status: 200, body: { kind: 'admin#directory#members', members, ...(p.next ? { nextPageToken: p.next } : {}) } };
      },
    },
    {
      method: 'GET',
      pattern: /^\/admin\/directory\/v1\/customer\/([^/]+)\/orgunits$/,
      name: 'orgunits.list',
      handler: () => ({
        status: 200,
        body: { kind: 'admin#directory#orgUnits', organizationUnits: tenant.orgUnits.map((o) => ({ kind: 'admin#directory#orgUnit', ...o })) },
      }),
    },
  ];
}

/**
 * What a Gmail sendAs listing takes of the quota, counted in signature writes: Gmail charges 1 quota
 * unit for `settings.sendAs.list` and 100 for an update (developers.google.com/gmail/api/reference/quota;
 * 1,200,000 units a minute per project is 200 updates a second). The emulator's `quotaPerSecond`
 * counts writes, so `quotaPerSecond: 200` is Gmail's per-project quota.
 */
export const GMAIL_LIST_QUOTA_COST = 0.01;

/** Gmail sendAs: list a mailbox's send-as addresses, patch one's signature. */
function gmailRoutes({ tenant, index, writes, events }: GoogleState): Route[] {
  const findUser = (key: string) => index.find(key);
  const sendAsOf = (email: string): SendAs[] => {
    const key = email.toLowerCase();
    let list = tenant.sendAs.get(key);
    if (!list) {
      const user = index.find(key);
      list = [
        {
          sendAsEmail: user?.primaryEmail ?? email,
          displayName: user?.name.fullName ?? '',
          isPrimary: true,
          isDefault: true,
          signature: '',
          verificationStatus: 'accepted',
        },
        ...(user?.aliases ?? []).map((a) => ({
          sendAsEmail: a,
          displayName: user?.name.fullName ?? '',
          isPrimary: false,
          isDefault: false,
          signature: '',
          verificationStatus: 'accepted' as const,
        })),
      ];
      tenant.sendAs.set(key, list);
    }
    return list;
  };
  return [
    {
      method: 'GET',
      pattern: /^\/gmail\/v1\/users\/([^/]+)\/settings\/sendAs$/,
      name: 'sendAs.list',
      quotaCost: GMAIL_LIST_QUOTA_COST,
      handler: (_c, m) => {
        const u = findUser(m[1]!);
        if (!u) return googleError(404, 'Requested entity was not found.', 'notFound');
        if (tenant.noMailbox.has(u.primaryEmail.toLowerCase())) return googleError(400, 'Mail service not enabled', 'failedPrecondition');
        return { status: 200, body: { sendAs: sendAsOf(u.primaryEmail) } };
      },
    },
    {
      method: 'PATCH',
      pattern: /^\/gmail\/v1\/users\/([^/]+)\/settings\/sendAs\/([^/]+)$/,
      name: 'sendAs.patch',
      handler: ({ body }, m) => {
        const u = findUser(m[1]!);
        if (!u) return googleError(404, 'Requested entity was not found.', 'notFound');
        if (tenant.noMailbox.has(u.primaryEmail.toLowerCase())) return googleError(400, 'Mail service not enabled', 'failedPrecondition');
        const entry = sendAsOf(u.primaryEmail).find((s) => s.sendAsEmail.toLowerCase() === decodeURIComponent(m[2]!).toLowerCase());
        if (!entry) return googleError(404, 'Requested entity was not found.', 'notFound');
        const patch = parseBody(body);
        if (typeof patch.signature === 'string') {
          if (patch.signature.length > 10_000) return googleError(400, 'Signature exceeds maximum length of 10000 characters', 'invalidArgument');
          entry.signature = patch.signature;
          writes.set(entry.sendAsEmail.toLowerCase(), (writes.get(entry.sendAsEmail.toLowerCase()) ?? 0) + 1);
          events.emit('write', entry.sendAsEmail.toLowerCase(), entry.signature);
        }
        return { status: 200, body: entry };
      },
    },
  ];
}

export async function startGoogleEmulator(tenant: GoogleTenant = generateGoogleTenant(25), knobs: Knobs = defaultKnobs()): Promise<GoogleEmulator> {
  const writes = new Map<string, number>();
  const events = new EventEmitter();
  const state: GoogleState = { tenant, knobs, index: userIndex(tenant), writes, events, requests: () => server.counters.requests };
  const server = await serve(
    [tokenRoute(state), ...directoryRoutes(state), ...gmailRoutes(state)],
    {
      revokedReply: () => googleError(401, 'Invalid Credentials', 'authError', { status: 'UNAUTHENTICATED' }),
      rateLimitedReply: (s) => googleError(429, 'Rate Limit Exceeded', 'rateLimitExceeded', { status: 'RESOURCE_EXHAUSTED', retryAfter: String(s) }),
      faultReply: () => googleError(503, 'The service is currently unavailable.', 'backendError', { status: 'UNAVAILABLE' }),
      malformedReply: () => ({ status: 200, body: { kind: 'admin#directory#users', users: [{ id: 42, primaryEmail: null }] } }),
    },
    knobs,
  );
  return Object.assign(server, {
    tenant,
    writes,
    events,
    signatures: () => Object.fromEntries([...tenant.sendAs.entries()].map(([k, list]) => [k, list.find((s) => s.isPrimary)?.signature ?? ''])),
  });
}
