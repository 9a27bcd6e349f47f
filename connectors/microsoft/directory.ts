/**
 * Microsoft Entra ID directory source: users (full listing and delta), groups with their transitive
 * members.
 *
 * Full listing: GET /users?$select=...&$top=999, following @odata.nextLink.
 * Incremental:  GET {deltaLink}, following @odata.nextLink until @odata.deltaLink.
 *
 * Where the first delta token comes from: before a full listing starts, the source asks
 * /users/delta?$deltatoken=latest ("sync from now", supported for directory objects) for a deltaLink
 * and hands it back as `nextState` on the listing's last page. Changes made while the listing runs
 * are therefore replayed by the next delta round (upserts are idempotent), so none is lost. The
 * alternative, running the full listing itself through /users/delta, was not chosen because delta
 * ignores $top (small server-sized pages) and returns users in no useful order; /users with
 * $top=999 needs far fewer requests on large tenants. The token travels inside the page token, so
 * a resumed listing still ends with it.
 *
 * Users map to DirectoryUser in user.ts (attributes, emails, removed users).
 *
 * Shared mailboxes: Entra lists a shared mailbox as a user whose account is disabled, like a person
 * who left. Exchange tells them apart in the mailbox's settings: `mailboxSettings.userPurpose` is
 * `shared` (else user, linked, room, equipment, others). Graph answers that property per user only:
 * `GET /users/{id}/mailboxSettings/userPurpose`, application permission `MailboxSettings.Read`;
 * `$select=mailboxSettings` works on a single user (GET /users/{id}) but the /users listing refuses
 * it, so it cannot ride on the listing's pages. So each disabled account with a mailbox address
 * costs one request per listing (a delta round: only those it reports changed), at most
 * MEMBER_FETCH_CONCURRENCY at a time, and is a teammate marked as a shared mailbox when its purpose
 * is `shared`, else removed as before. A 404 (no Exchange Online mailbox) means not shared; a 403
 * (MailboxSettings.Read not granted) too, with one warning per run: shared mailboxes then count as
 * removed, as they did before this permission was asked for. This lookup is optional: one mailbox
 * must not stall the directory. Any other refusal (a 400, a body that does not parse) degrades that
 * account as a 403 does, at once; a throttled or failing Graph (429, 5xx, the network) fails the
 * page, which the engine retries, until the same account has failed PURPOSE_ATTEMPTS times in the
 * run; then it is degraded too. Each degraded account is a problem of its page (the run's
 * error_details), naming the account and Graph's answer.
 * https://learn.microsoft.com/graph/api/user-get-mailboxsettings (permissions, the userPurpose path)
 * https://learn.microsoft.com/graph/api/resources/mailboxsettings (userPurpose values)
 * https://learn.microsoft.com/graph/api/resources/user (mailboxSettings: only on $select, on Get user)
 *
 * https://learn.microsoft.com/graph/api/user-list
 * https://learn.microsoft.com/graph/api/user-delta
 * https://learn.microsoft.com/graph/delta-query-users
 */
import pLimit from 'p-limit';
import type { z } from 'zod';
import {
  ConnectorError,
  CursorExpiredError,
  defineDirectorySource,
  type DirectoryGroup,
  type DirectoryPage,
  type DirectorySource,
  type FetchUsersOptions,
  type IncrementalState,
  InvalidResponseError,
  RateLimitedError,
} from '../types.ts';
import { DIRECTORY_PERMISSIONS } from './auth.ts';
import { GraphApi, type GraphContext } from './graph.ts';
import { decodePageToken, encodePageToken, type PageToken } from './pageToken.ts';
import { text, toDirectoryUser, USER_PROPERTIES } from './user.ts';
import {
  GraphDirectoryObjectCollection,
  GraphGroupCollection,
  type GraphUser,
  GraphUserCollection,
  GraphUserPurpose,
  microsoftConfigSchema,
  microsoftCredentialsSchema,
} from './schemas.ts';

/** Graph documents that directory delta tokens last 7 days. */
export const DELTA_TOKEN_LIFETIME_MS = 7 * 24 * 3600 * 1000;
/** Largest page /users allows. */
const PAGE_SIZE = '999';
/** Groups (full listing) or users (delta round) whose memberships are fetched at the same time. */
const MEMBER_FETCH_CONCURRENCY = 4;
/** Failures of one account's purpose lookup, throttled or 5xx, a run retries before degrading it. */
export const PURPOSE_ATTEMPTS = 3;

/** user id -> ids of the groups they belong to, directly or through nested groups */
type Memberships = Map<string, string[]>;
type DirectoryObject = z.infer<typeof GraphDirectoryObjectCollection>['value'][number];

export class MicrosoftDirectory implements DirectorySource {
  readonly incremental = true;
  private readonly graph: GraphApi;
  private readonly extensionAttributes: readonly string[];
  private groupList: Promise<DirectoryGroup[]> | undefined;
  private memberIndex: Promise<Memberships> | undefined;
  /** Directory-object listings of this run: the objects so far and the next page (none when complete). */
  private readonly listed = new Map<string, { objects: DirectoryObject[]; next: string | undefined }>();
  /** Mailbox purposes asked for in this run, by user id (a retried page does not ask again). */
  private readonly purposes = new Map<string, Promise<string | null>>();
  private purposeDenied = false;
  /** Accounts whose purpose lookup failed (how many times), and why those degraded were. */
  private readonly purposeFailures = new Map<string, number>();
  private readonly purposeProblems = new Map<string, string>();

  constructor(graph: GraphApi, extensionAttributes: readonly string[]) {
    this.graph = graph;
    this.extensionAttributes = extensionAttributes;
  }

  private select(): string {
    return [...USER_PROPERTIES, ...this.extensionAttributes].join(',');
  }

  /** https://learn.microsoft.com/graph/api/user-list, https://learn.microsoft.com/graph/api/group-list */
  async checkAccess(): Promise<void> {
    await this.graph.json('GET', this.graph.url('users', { $select: 'id', $top: '1' }), GraphUserCollection, 'Microsoft Graph users', { scope: 'directory' });
    await this.graph.json('GET', this.graph.url('groups', { $select: 'id', $top: '1' }), GraphGroupCollection, 'Microsoft Graph groups', {
      scope: 'directory',
    });
  }

  /** The groups, listed once per source instance (one sync run). */
  listGroups(): Promise<DirectoryGroup[]> {
    this.groupList ??= this.loadGroupList().catch((err: unknown) => {
      this.groupList = undefined;
      throw err;
    });
    return this.groupList;
  }

  /**
   * Every group's transitive members, loaded once per full listing and shared by its pages. A delta
   * round does not load it: it asks for the memberships of the users it changed (userMemberships),
   * so its cost follows the changes, not the size of the directory.
   */
  private memberships(): Promise<Memberships> {
    this.memberIndex ??= this.loadMemberships().catch((err: unknown) => {
      this.memberIndex = undefined;
      throw err;
    });
    return this.memberIndex;
  }

  private async loadGroupList(): Promise<DirectoryGroup[]> {
    const list: DirectoryGroup[] = [];
    // https://learn.microsoft.com/graph/api/group-list
    for (let url: string | undefined = this.graph.url('groups', { $select: 'id,displayName,mail', $top: PAGE_SIZE }); url;) {
      const page: z.infer<typeof GraphGroupCollection> = await this.graph.json('GET', url, GraphGroupCollection, 'Microsoft Graph groups page', {
        scope: 'directory',
      });
      for (const g of page.value) list.push({ externalId: g.id, kind: 'group', name: text(g.displayName) ?? g.id, email: text(g.mail) ?? null });
      url = page['@odata.nextLink'];
    }
    return list;
  }

  private async loadMemberships(): Promise<Memberships> {
    const list = await this.listGroups();
    const byUser: Memberships = new Map();
    const limit = pLimit(MEMBER_FETCH_CONCURRENCY);
    await Promise.all(list.map((g) => limit(() => this.loadMembers(g.externalId, byUser))));
    // Member pages arrive in any order; list each user's groups in the order Graph lists the groups.
    await this.sortByListOrder(byUser);
    this.graph.logger.debug({ groups: list.length, members: byUser.size }, 'Microsoft groups loaded');
    return byUser;
  }

  private async sortByListOrder(byUser: Memberships): Promise<void> {
    const order = new Map((await this.listGroups()).map((g, i) => [g.externalId, i]));
    for (const [user, groups] of byUser)
      byUser.set(
        user,
        groups.filter((g) => order.has(g)).sort((a, b) => order.get(a)! - order.get(b)!),
      );
  }

  /** https://learn.microsoft.com/graph/api/user-list-transitivememberof */
  private async userMemberships(userIds: string[]): Promise<Memberships> {
    const byUser: Memberships = new Map();
    const limit = pLimit(MEMBER_FETCH_CONCURRENCY);
    await Promise.all(
      userIds.map((id) =>
        limit(async () => {
          // A user deleted after the delta page listed them has none: the next round reports the removal.
          const memberOf = await this.directoryObjects(`users/${encodeURIComponent(id)}/transitiveMemberOf`, 'Microsoft Graph user memberships page');
          byUser.set(
            id,
            memberOf.filter((o) => o['@odata.type'] === '#microsoft.graph.group').map((o) => o.id),
          );
        }),
      ),
    );
    await this.sortByListOrder(byUser);
    return byUser;
  }

  /** https://learn.microsoft.com/graph/api/group-list-transitivemembers */
  private async loadMembers(groupId: string, byUser: Memberships): Promise<void> {
    // A group deleted after it was listed simply has no members in this run.
    const members = await this.directoryObjects(`groups/${encodeURIComponent(groupId)}/transitiveMembers`, 'Microsoft Graph group members page');
    for (const m of members) {
      if (m['@odata.type'] !== '#microsoft.graph.user') continue;
      const groups = byUser.get(m.id);
      if (groups) {
        if (!groups.includes(groupId)) groups.push(groupId);
      } else byUser.set(m.id, [groupId]);
    }
  }

  /**
   * Every object of a directory-object collection at `path` ($select=id), following nextLink; none
   * on 404. The pages listed so far are kept per path for this run, so the retry of a listing that
   * failed part-way (a 429 on page 7) resumes from the failed page.
   */
  private async directoryObjects(path: string, what: string): Promise<DirectoryObject[]> {
    let progress = this.listed.get(path);
    if (!progress) this.listed.set(path, (progress = { objects: [], next: this.graph.url(path, { $select: 'id', $top: PAGE_SIZE }) }));
    while (progress.next) {
      let page: z.infer<typeof GraphDirectoryObjectCollection>;
      try {
        page = await this.graph.json('GET', progress.next, GraphDirectoryObjectCollection, what, { scope: 'directory' });
      } catch (err) {
        if (!(err instanceof ConnectorError && err.status === 404)) throw err;
        Object.assign(progress, { objects: [], next: undefined });
        break;
      }
      progress.objects.push(...page.value);
      progress.next = page['@odata.nextLink'];
    }
    return progress.objects;
  }

  async fetchUsersPage(opts: FetchUsersOptions): Promise<DirectoryPage> {
    if (opts.since && !opts.pageToken) {
      const obtained = Date.parse(opts.since.obtainedAt);
      if (Number.isNaN(obtained) || Date.now() - obtained > DELTA_TOKEN_LIFETIME_MS) {
        throw new CursorExpiredError(`the delta token from ${opts.since.obtainedAt} is older than Graph's 7-day lifetime`);
      }
    }
    return opts.since ? this.deltaPage(opts.since, opts.pageToken) : this.fullPage(opts.pageToken);
  }

  /**
   * The mailbox purpose of each disabled account that has a mailbox address (see the top of this
   * file): the only users that may be shared mailboxes.
   */
  private async purposesOf(users: GraphUser[]): Promise<Map<string, string | null>> {
    const asked = users.filter((u) => u.accountEnabled === false && (text(u.mail) !== undefined || (u.proxyAddresses ?? []).some((p) => /^smtp:/i.test(p))));
    const out = new Map<string, string | null>();
    const limit = pLimit(MEMBER_FETCH_CONCURRENCY);
    await Promise.all(asked.map((u) => limit(async () => out.set(u.id, await this.purposeOf(u.id)))));
    return out;
  }

  private purposeOf(id: string): Promise<string | null> {
    let kept = this.purposes.get(id);
    if (!kept) {
      kept = this.loadPurpose(id);
      this.purposes.set(id, kept);
      kept.catch(() => this.purposes.delete(id));
    }
    return kept;
  }

  /** https://learn.microsoft.com/graph/api/user-get-mailboxsettings */
  private async loadPurpose(id: string): Promise<string | null> {
    try {
      const url = this.graph.url(`users/${encodeURIComponent(id)}/mailboxSettings/userPurpose`);
      return (await this.graph.json('GET', url, GraphUserPurpose, 'Microsoft Graph mailbox purpose', { scope: 'mailbox' })).value ?? null;
    } catch (err) {
      // No Exchange Online mailbox (MailboxNotEnabledForRESTAPI, ErrorInvalidUser...): not a shared mailbox.
      if (err instanceof ConnectorError && err.status === 404) return null;
      if (err instanceof ConnectorError && err.status === 403) {
        if (!this.purposeDenied) {
          this.purposeDenied = true;
          this.graph.logger.warn(
            { providerCode: err.providerCode },
            'Microsoft Graph refused to read mailbox settings (grant MailboxSettings.Read): disabled accounts are treated as people who left, shared mailboxes included',
          );
        }
        return null;
      }
      return this.degradePurpose(id, err);
    }
  }

  /** A purpose lookup that failed otherwise: retried (thrown) while worth it, else not a shared mailbox, as a problem of the page. */
  private degradePurpose(id: string, err: unknown): null {
    // Graph's 400 reaches here as a TransientError (graph.ts): the status decides, not the class.
    const status = err instanceof ConnectorError ? err.status : undefined;
    const retryable =
      (err instanceof RateLimitedError || (err instanceof ConnectorError && err.code === 'transient')) &&
      (status === undefined || status === 429 || status >= 500);
    const failures = (this.purposeFailures.get(id) ?? 0) + 1;
    this.purposeFailures.set(id, failures);
    if ((retryable && failures < PURPOSE_ATTEMPTS) || !(err instanceof ConnectorError)) throw err;
    const why = retryable ? `failed ${failures} times` : 'was refused';
    this.purposeProblems.set(id, `the mailbox purpose (mailboxSettings/userPurpose) ${why}: ${err.message}; treated as not a shared mailbox`);
    this.graph.logger.warn(
      { userId: id, status: err.status, providerCode: err.providerCode },
      'Microsoft Graph mailbox purpose unreadable for one account; treated as not a shared mailbox',
    );
    return null;
  }

  private map(
    users: GraphUser[],
    groups: Memberships,
    purposes: ReadonlyMap<string, string | null>,
    page: Omit<DirectoryPage, 'users' | 'skipped'>,
  ): DirectoryPage {
    const out: DirectoryPage = { ...page, users: [], skipped: [] };
    const problems: NonNullable<DirectoryPage['problems']> = [];
    for (const u of users) {
      const m = toDirectoryUser(u, {
        baseUrl: this.graph.baseUrl,
        extensionAttributes: this.extensionAttributes,
        groups: groups.get(u.id) ?? [],
        purpose: purposes.get(u.id),
      });
      if ('user' in m) out.users.push(m.user);
      else out.skipped.push(m.skipped);
      const problem = this.purposeProblems.get(u.id);
      if (problem) problems.push({ externalId: u.id, ...(text(u.mail) ? { email: text(u.mail)! } : {}), message: problem });
    }
    return problems.length ? { ...out, problems } : out;
  }

  private async fullPage(pageToken: string | undefined): Promise<DirectoryPage> {
    const groups = await this.memberships();
    let token: PageToken;
    if (pageToken) {
      token = decodePageToken(pageToken);
    } else {
      // "Sync from now": a deltaLink that covers every change from this moment, taken before the
      // listing starts. https://learn.microsoft.com/graph/delta-query-overview
      const deltaAt = new Date().toISOString();
      const latest = await this.graph.json(
        'GET',
        this.graph.url('users/delta', { $select: this.select(), $deltatoken: 'latest' }),
        GraphUserCollection,
        'Microsoft Graph users delta (latest)',
        {
          scope: 'directory',
        },
      );
      const delta = latest['@odata.deltaLink'];
      if (!delta) throw new InvalidResponseError('Microsoft Graph users delta (latest): no @odata.deltaLink', []);
      token = { next: this.graph.url('users', { $select: this.select(), $top: PAGE_SIZE }), delta, deltaAt };
    }
    const page = await this.graph.json('GET', token.next, GraphUserCollection, 'Microsoft Graph users page', { scope: 'directory' });
    const next = page['@odata.nextLink'];
    const nextState: IncrementalState | undefined = !next && token.delta && token.deltaAt ? { token: token.delta, obtainedAt: token.deltaAt } : undefined;
    const listed = page.value.filter((u) => !u['@removed']);
    return this.map(listed, groups, await this.purposesOf(listed), {
      removedIds: [],
      nextPageToken: next ? encodePageToken({ ...token, next }) : null,
      ...(nextState ? { nextState } : {}),
    });
  }

  private async deltaPage(since: IncrementalState, pageToken: string | undefined): Promise<DirectoryPage> {
    const url = pageToken ? decodePageToken(pageToken).next : since.token;
    const page = await this.graph.json('GET', url, GraphUserCollection, 'Microsoft Graph users delta page', { scope: 'directory' });
    const next = page['@odata.nextLink'];
    const deltaLink = page['@odata.deltaLink'];
    if (!next && !deltaLink) throw new InvalidResponseError('Microsoft Graph users delta page: neither @odata.nextLink nor @odata.deltaLink', []);
    const removedIds = page.value.filter((u) => u['@removed']).map((u) => u.id);
    const changed = page.value.filter((u) => !u['@removed']);
    const purposes = await this.purposesOf(changed);
    const groups = await this.userMemberships(changed.filter((u) => u.accountEnabled !== false || purposes.get(u.id) === 'shared').map((u) => u.id));
    return this.map(changed, groups, purposes, {
      removedIds,
      nextPageToken: next ? encodePageToken({ next }) : null,
      // The deltaLink is handed back only on the last page, so an interrupted round is never half-saved.
      ...(!next && deltaLink ? { nextState: { token: deltaLink, obtainedAt: new Date().toISOString() } } : {}),
    });
  }
}

export const microsoftDirectorySource = defineDirectorySource({
  kind: 'microsoft_entra',
  scopes: DIRECTORY_PERMISSIONS,
  configSchema: microsoftConfigSchema,
  credentialsSchema: microsoftCredentialsSchema,
  create: (ctx) => new MicrosoftDirectory(new GraphApi(ctx satisfies GraphContext), ctx.config.extension_attributes),
});
