/**
 * Google Workspace directory source (categories `teammates` and `smart_fields`).
 *
 * - Users: Admin SDK Directory `users.list` (customer or domain, 500 per page, projection=full so
 *   custom schemas come along), paged by `pageToken`. Google has no delta listing: every run is a
 *   full listing (`incremental: false`).
 * - Groups: `groups.list`, and for each group `members.list` with derived (nested) memberships.
 *   Memberships are loaded once per source instance, beside the users listing. A users page that
 *   arrives before they are loaded is returned without its users' groups (`groupsPending`), which
 *   the engine asks for with `groupsOf` once they are loaded; so the members listing (up to 200
 *   members a call, one call after another within a group) does not delay the users listing. A
 *   scope that selects by group needs the memberships first: then the users pages wait for them,
 *   read ahead meanwhile (at most READ_AHEAD_PAGES).
 * - Org units: `orgunits.list` with type=all, plus the root `/`.
 * - Sync scope (config `scope`): users outside it are reported as skipped (`out_of_scope`).
 */
import { admin, type admin_directory_v1 } from '@googleapis/admin';
import pLimit from 'p-limit';
import type { z } from 'zod';
import type { Logger } from 'pino';
import {
  defineDirectorySource,
  parseProvider,
  type ConnectorContext,
  type DirectoryGroup,
  type DirectoryPage,
  type DirectorySource,
  type FetchUsersOptions,
  type GroupsQuery,
} from '../types.ts';
import { adminAuthClient, credentialSecrets, googleCredentialsSchema, secretRedactor, type GoogleCredentials, type Redactor } from './auth.ts';
import { apiOptions, googleConfigSchema, type GoogleConfig } from './config.ts';
import { call, isNotFound, toConnectorError, type MapOptions } from './errors.ts';
import { GoogleGroupsPage, GoogleMembersPage, GoogleOrgUnits, GoogleUsersPage, type GoogleGroup, type GoogleMember } from './schemas.ts';
import { familyFilter, groupsOf, NO_MEMBERSHIPS, toDirectoryUser, type Memberships } from './user.ts';

/** OAuth scopes to delegate for the directory (and the photo source, which needs the first one). */
export const DIRECTORY_SCOPES = [
  'https://www.googleapis.com/auth/admin.directory.user.readonly',
  'https://www.googleapis.com/auth/admin.directory.group.readonly',
  'https://www.googleapis.com/auth/admin.directory.orgunit.readonly',
] as const;

export const USERS_PAGE_SIZE = 500;
const GROUPS_PAGE_SIZE = 200;
const MEMBERS_PAGE_SIZE = 200;
/**
 * members.list calls in flight at once while loading memberships: the pages of one group come one
 * after another, so this many groups are listed at once.
 */
const MEMBERS_CONCURRENCY = 8;
/** Users pages read ahead at most while the memberships load (about 0.5 MB each). */
const READ_AHEAD_PAGES = 40;

type GoogleUsersPageT = z.infer<typeof GoogleUsersPage>;

type Ctx = ConnectorContext<GoogleConfig, GoogleCredentials>;

interface ScopeMatcher {
  orgUnits: Set<string>;
  groupIds: Set<string>;
  emails: Set<string>;
}

export class GoogleDirectorySource implements DirectorySource {
  readonly incremental = false;
  readonly #config: GoogleConfig;
  readonly #logger: Logger;
  readonly #redact: Redactor;
  readonly #api: admin_directory_v1.Admin;
  #groups: Promise<GoogleGroup[]> | undefined;
  #memberships: Promise<Memberships> | undefined;
  /**
   * Each group's members as listed so far, and the page to list next. A failed call (a 429 on page
   * 7 of 50) fails the memberships load, and its retry resumes from there instead of starting over.
   */
  readonly #memberProgress = new Map<string, { members: GoogleMember[]; pageToken: string | undefined; done: boolean }>();
  #scope: Promise<ScopeMatcher | undefined> | undefined;
  #membershipsLoaded = false;
  /** Users pages read ahead while the memberships load, by the page token that asks for them ('' for the first). */
  readonly #readAhead = new Map<string, Promise<GoogleUsersPageT>>();

  constructor(ctx: Ctx) {
    this.#config = ctx.config;
    this.#logger = ctx.logger.child({ connector: 'google_workspace.directory' });
    this.#redact = secretRedactor(credentialSecrets(ctx.credentials));
    const auth = adminAuthClient(ctx.credentials, DIRECTORY_SCOPES, {
      tokenUrl: ctx.config.token_url,
      timeoutMs: ctx.config.request_timeout_ms,
      signal: ctx.signal,
    });
    this.#api = admin({ version: 'directory_v1', auth, ...apiOptions(ctx.config) });
  }

  #site(what: string): MapOptions {
    return { site: 'directory', what, redact: this.#redact };
  }

  /** customer, or domain when the config narrows the listing to one domain. */
  #account(): { customer: string } | { domain: string } {
    return this.#config.domain ? { domain: this.#config.domain } : { customer: this.#config.customer };
  }

  async checkAccess(): Promise<void> {
    // https://developers.google.com/workspace/admin/directory/reference/rest/v1/users/list
    const res = await call(this.#site('users.list'), () => this.#api.users.list({ ...this.#account(), maxResults: 1 }));
    parseProvider(GoogleUsersPage, res.data, 'google users.list');
  }

  async fetchUsersPage(opts: FetchUsersOptions): Promise<DirectoryPage> {
    // Memberships are needed for every run, a resumed one's too; they load beside the users pages.
    const loading = this.#loadMemberships();
    loading.catch(() => {}); // awaited below, or by groupsOf
    const pending = this.#usersPage(opts.pageToken);
    this.#scope ??= this.#scopeMatcher().catch((err: unknown) => {
      this.#scope = undefined;
      throw err;
    });
    const scope = await this.#scope;
    let memberships: Memberships | undefined;
    if (this.#membershipsLoaded || scope?.groupIds.size) {
      memberships = await loading.catch((err: unknown) => {
        this.#keepForRetry(opts.pageToken ?? '', pending);
        throw err;
      });
    }
    const page = await pending;
    const out: DirectoryPage = {
      users: [],
      removedIds: [],
      skipped: [],
      nextPageToken: page.nextPageToken || null,
      ...(memberships ? {} : { groupsPending: true }),
    };
    const want = familyFilter(opts.attributes);
    for (const raw of page.users ?? []) {
      const user = toDirectoryUser(raw, memberships ?? NO_MEMBERSHIPS, want);
      if (scope && !inScope(scope, user)) {
        out.skipped.push({ externalId: user.externalId, reason: 'out_of_scope' });
        continue;
      }
      out.users.push(user);
    }
    this.#logger.debug({ users: out.users.length, skipped: out.skipped.length, more: out.nextPageToken !== null }, 'google users page');
    return out;
  }

  async groupsOf(users: readonly GroupsQuery[]): Promise<Map<string, string[]>> {
    const memberships = await this.#loadMemberships();
    return new Map(users.map((u) => [u.externalId, groupsOf(u.externalId, memberships, u.emails)]));
  }

  /** A page read while the memberships failed to load waits for the retry, which reads it no second time (unless it failed too). */
  #keepForRetry(key: string, page: Promise<GoogleUsersPageT>): void {
    if (this.#readAhead.has(key)) return;
    this.#readAhead.set(key, page);
    page.catch(() => {
      if (this.#readAhead.get(key) === page) this.#readAhead.delete(key);
    });
  }

  /** The users page after `token`: read ahead already, or read now. */
  #usersPage(token: string | undefined): Promise<GoogleUsersPageT> {
    const key = token ?? '';
    const page = this.#readAhead.get(key) ?? this.#fetchUsersPage(token);
    this.#readAhead.delete(key);
    this.#readOn(page);
    return page;
  }

  /**
   * While the memberships load (a members listing as long as the users listing, at 100,000 people),
   * the users pages that follow are read ahead, up to READ_AHEAD_PAGES, so that the users listing
   * does not wait for it. A page read ahead that fails is answered, and retried, when it is asked for.
   */
  #readOn(page: Promise<GoogleUsersPageT>): void {
    page.then(
      (p) => {
        const next = p.nextPageToken;
        if (this.#membershipsLoaded || !next || this.#readAhead.has(next) || this.#readAhead.size >= READ_AHEAD_PAGES) return;
        const ahead = this.#fetchUsersPage(next);
        ahead.catch(() => {}); // answered when asked for
        this.#readAhead.set(next, ahead);
        this.#readOn(ahead);
      },
      () => {},
    );
  }

  async #fetchUsersPage(token: string | undefined): Promise<GoogleUsersPageT> {
    // https://developers.google.com/workspace/admin/directory/reference/rest/v1/users/list
    const res = await call(this.#site('users.list'), () =>
      this.#api.users.list({ ...this.#account(), maxResults: USERS_PAGE_SIZE, projection: 'full', ...(token ? { pageToken: token } : {}) }),
    );
    return parseProvider(GoogleUsersPage, res.data, 'google users.list');
  }

  async listGroups(): Promise<DirectoryGroup[]> {
    // The groups and the org units are listed at once: neither depends on the other.
    const [groups, res] = await Promise.all([
      this.#loadGroups(),
      // https://developers.google.com/workspace/admin/directory/reference/rest/v1/orgunits/list
      call(this.#site('orgunits.list'), () => this.#api.orgunits.list({ customerId: this.#config.customer, type: 'all' })),
    ]);
    const units = parseProvider(GoogleOrgUnits, res.data, 'google orgunits.list').organizationUnits ?? [];

    const out: DirectoryGroup[] = groups.map((g) => ({ externalId: g.id, kind: 'group', name: g.name || g.email || g.id, email: g.email ?? null }));
    out.push({ externalId: '/', kind: 'org_unit', name: '/', path: '/' });
    for (const u of units) {
      if (u.orgUnitPath === '/') continue;
      out.push({ externalId: u.orgUnitPath, kind: 'org_unit', name: u.name || u.orgUnitPath, path: u.orgUnitPath });
    }
    return out;
  }

  /** Every group of the account (or domain), fetched once per source instance. */
  #loadGroups(): Promise<GoogleGroup[]> {
    this.#groups ??= this.#fetchGroups().catch((err: unknown) => {
      this.#groups = undefined;
      throw err;
    });
    return this.#groups;
  }

  async #fetchGroups(): Promise<GoogleGroup[]> {
    const groups: GoogleGroup[] = [];
    let pageToken: string | undefined;
    do {
      const token = pageToken;
      // https://developers.google.com/workspace/admin/directory/reference/rest/v1/groups/list
      const res = await call(this.#site('groups.list'), () =>
        this.#api.groups.list({ ...this.#account(), maxResults: GROUPS_PAGE_SIZE, ...(token ? { pageToken: token } : {}) }),
      );
      const page = parseProvider(GoogleGroupsPage, res.data, 'google groups.list');
      groups.push(...(page.groups ?? []));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    return groups;
  }

  #loadMemberships(): Promise<Memberships> {
    this.#memberships ??= this.#fetchMemberships().then(
      (m) => {
        this.#membershipsLoaded = true;
        return m;
      },
      (err: unknown) => {
        this.#memberships = undefined;
        throw err;
      },
    );
    return this.#memberships;
  }

  async #fetchMemberships(): Promise<Memberships> {
    const groups = await this.#loadGroups();
    const byUserId = new Map<string, string[]>();
    const byEmail = new Map<string, string[]>();
    const everyone: string[] = [];
    const add = (map: Map<string, string[]>, key: string, groupId: string) => {
      const list = map.get(key);
      if (!list) map.set(key, [groupId]);
      else if (!list.includes(groupId)) list.push(groupId);
    };

    const limit = pLimit(MEMBERS_CONCURRENCY);
    const perGroup = await Promise.all(groups.map((g) => limit(() => this.#fetchMembers(g))));
    groups.forEach((g, i) => {
      for (const m of perGroup[i] ?? []) {
        if (m.type === 'CUSTOMER') {
          if (!everyone.includes(g.id)) everyone.push(g.id);
        } else if (m.type === 'USER' || m.type === null || m.type === undefined) {
          if (m.id) add(byUserId, m.id, g.id);
          else if (m.email) add(byEmail, m.email.toLowerCase(), g.id);
        }
      }
    });
    // The member listings are kept only for a retry of a failed load; the maps above hold what is needed.
    this.#memberProgress.clear();
    this.#logger.debug({ groups: groups.length, members: byUserId.size + byEmail.size }, 'google group memberships loaded');
    return { byUserId, byEmail, everyone };
  }

  async #fetchMembers(group: GoogleGroup): Promise<GoogleMember[]> {
    let progress = this.#memberProgress.get(group.id);
    if (!progress) this.#memberProgress.set(group.id, (progress = { members: [], pageToken: undefined, done: false }));
    while (!progress.done) {
      const token = progress.pageToken;
      let data: unknown;
      try {
        // https://developers.google.com/workspace/admin/directory/reference/rest/v1/members/list
        const res = await this.#api.members.list({
          groupKey: group.id,
          includeDerivedMembership: true,
          maxResults: MEMBERS_PAGE_SIZE,
          ...(token ? { pageToken: token } : {}),
        });
        data = res.data;
      } catch (err) {
        // A group deleted since groups.list has no members; anything else fails the listing.
        if (isNotFound(err, '/members')) {
          this.#logger.info({ groupId: group.id }, 'google group vanished while listing members');
          Object.assign(progress, { members: [], done: true });
          break;
        }
        throw toConnectorError(err, this.#site('members.list'));
      }
      const page = parseProvider(GoogleMembersPage, data, 'google members.list');
      progress.members.push(...(page.members ?? []));
      progress.pageToken = page.nextPageToken || undefined;
      progress.done = !progress.pageToken;
    }
    return progress.members;
  }

  /** The configured scope, with group emails resolved to ids; undefined when everyone is in scope. */
  async #scopeMatcher(): Promise<ScopeMatcher | undefined> {
    const scope = this.#config.scope;
    if (!scope || (scope.org_units.length === 0 && scope.groups.length === 0 && scope.emails.length === 0)) return undefined;
    const groupIds = new Set<string>();
    if (scope.groups.length) {
      const groups = await this.#loadGroups();
      for (const wanted of scope.groups) {
        const w = wanted.toLowerCase();
        const g = groups.find((x) => x.id === wanted || x.email?.toLowerCase() === w || x.aliases?.some((a) => a.toLowerCase() === w));
        if (g) groupIds.add(g.id);
        else this.#logger.warn({ group: wanted }, 'google sync scope names a group that does not exist');
      }
    }
    return {
      orgUnits: new Set(scope.org_units.map((p) => (p.length > 1 ? p.replace(/\/+$/, '') : p))),
      groupIds,
      emails: new Set(scope.emails.map((e) => e.toLowerCase())),
    };
  }
}

function inScope(scope: ScopeMatcher, user: { primaryEmail: string | null; aliases: string[]; groups: string[]; orgUnits: string[] }): boolean {
  if (user.orgUnits.some((o) => scope.orgUnits.has(o))) return true;
  if (user.groups.some((g) => scope.groupIds.has(g))) return true;
  return [user.primaryEmail, ...user.aliases].some((e) => e !== null && scope.emails.has(e.toLowerCase()));
}

export const googleDirectorySource = defineDirectorySource({
  kind: 'google_workspace',
  scopes: DIRECTORY_SCOPES,
  configSchema: googleConfigSchema,
  credentialsSchema: googleCredentialsSchema,
  create: (ctx) => new GoogleDirectorySource(ctx),
});
