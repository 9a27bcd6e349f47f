/**
 * The users listing of one run: the next page is fetched while pages are written, up to
 * SYNC_PAGE_CONCURRENCY at once (see listPages), each page in one transaction that checks the run is
 * still this execution's (holdRun), writes the page in stages (write.ts), and saves the counters,
 * the stage timings and the provider's next page token as the checkpoint, in listing order.
 *
 * A listing that does not end is refused: a page token the run already asked for (a provider that
 * repeats itself would keep the run alive forever), or more pages or users than the directory's
 * known size allows, fails the run as `invalid_response` before the page is written, and a failed
 * run deletes nobody.
 */
import type pg from 'pg';
import { ConnectorError, type DirectoryPage, type DirectorySource, type IncrementalState } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { recordDirectoryPhotos } from '../assets/directoryPhotos.ts';
import { cleanPageUsers, cleanText } from './clean.ts';
import { withRetry, type RetryPolicy } from './retry.ts';
import { holdRun, recordPage, type SyncRunRow } from '../integrations/syncRuns.ts';
import { holdInstallers } from '../integrations/integrations.ts';
import { queueInstalls } from './installs.ts';
import { SyncStatistics } from './stats.ts';
import { StageTimer } from './timing.ts';
import { sourceGroupsOf, writeGroupsBesideListing } from './pendingGroups.ts';
import { unchangedButGroups, writePage, type MappedField, type PageResult, type RunErrorDetail } from './write.ts';

const MAX_ERROR_DETAILS = 100;

/** The most pages and users (counted on every page, repeats included) one run may list. */
export interface ListingBound {
  pages: number;
  users: number;
}

/**
 * By default: one page per known user and three times the known users (the directory's sources, or
 * the last complete run's count), plus 10,000 pages and a million users, so that a first sync (no
 * known size) and a directory that grew at once still complete, while a listing without end stops.
 */
export const defaultListingBound = (knownUsers: number): ListingBound => ({ pages: 10_000 + knownUsers, users: 1_000_000 + 3 * knownUsers });

/** A listing that does not end the way a provider's listing ends. */
export class EndlessListingError extends ConnectorError {
  override readonly name = 'EndlessListingError';
  readonly code = 'invalid_response' as const;
}

/** Refuses a repeated page token and a listing past its bound. */
export class ListingGuard {
  readonly #asked = new Set<string>();
  #pages: number;
  #users: number;
  readonly #bound: ListingBound;

  constructor(bound: ListingBound, run: Pick<SyncRunRow, 'pages' | 'seen'>, firstToken: string | undefined) {
    this.#bound = bound;
    this.#pages = run.pages;
    this.#users = run.seen;
    if (firstToken) this.#asked.add(firstToken);
  }

  /** Why the listing must stop at this page, the next one to check, or null; changes nothing. */
  refusal(page: DirectoryPage): string | null {
    const pages = this.#pages + 1;
    const users = this.#users + page.users.length;
    const next = page.nextPageToken;
    if (next && this.#asked.has(next)) {
      return `users listing: the provider answered a page token it had already given in this run (page ${pages}); stopped, nobody deleted`;
    }
    if (pages > this.#bound.pages || users > this.#bound.users) {
      return `users listing: ${pages} pages and ${users} users, past the bound for this directory's known size (${this.#bound.pages} pages, ${this.#bound.users} users); stopped, nobody deleted`;
    }
    return null;
  }

  /** Checks a page that arrived; throws EndlessListingError if the listing must stop. */
  check(page: DirectoryPage): void {
    const refused = this.refusal(page);
    if (refused) throw new EndlessListingError(refused);
    this.#pages++;
    this.#users += page.users.length;
    if (page.nextPageToken) this.#asked.add(page.nextPageToken);
  }
}

export interface PageLoop {
  executor: string;
  pageToken: string | undefined;
  /** The page `pageToken` asks for, when the caller asked for it already (with the same retry policy). */
  first?: Promise<DirectoryPage> | undefined;
  /** Aborted when the run no longer wants pages: requests in flight are then not retried. */
  signal?: AbortSignal | undefined;
  since: IncrementalState | undefined;
  fields: MappedField[];
  category: 'teammates' | 'smart_fields';
  groupIds: Map<string, string>;
  policy: RetryPolicy;
  observer: Parameters<typeof withRetry>[2];
  bound: ListingBound;
}

/** A page being written: the people and addresses it holds, and its transaction. */
interface InFlight {
  keys: Set<string>;
  done: Promise<number>;
}

/** The directory ids and addresses of a page: two pages sharing one are never written at once. */
function pageKeys(page: DirectoryPage): Set<string> {
  const keys = new Set<string>(page.removedIds.map((id) => `id:${id}`));
  for (const u of page.users) {
    keys.add(`id:${u.externalId}`);
    for (const a of [u.primaryEmail, ...u.aliases]) if (a) keys.add(`@${a.trim().toLowerCase()}`);
  }
  return keys;
}

function overlaps(a: Set<string>, b: Set<string>): boolean {
  const [small, large] = a.size < b.size ? [a, b] : [b, a];
  for (const k of small) if (large.has(k)) return true;
  return false;
}

/**
 * Lists and writes every page; returns the incremental state of the last page.
 *
 * Up to SYNC_PAGE_CONCURRENCY pages are written at once, each in its own transaction. A page writes
 * its people, addresses, memberships, values and seen users at once with the others, then waits
 * for the page before it to commit before it touches what pages share (the events and their
 * webhook queue, the photo and install jobs, the run row with its counters and checkpoint). So
 * pages commit in listing order, and the checkpoint after a crash is still the token after the last
 * page whose every predecessor is written. Two pages sharing a person or an address are not
 * written at once: the later one starts when the earlier one has committed, so the transactions of
 * one run never wait for each other's rows. A failed page fails the ones after it, unwritten.
 */
export async function listPages(ctx: AppContext, source: DirectorySource, run: SyncRunRow, loop: PageLoop): Promise<IncrementalState | undefined> {
  const attributes = loop.fields.map((f) => f.attribute);
  const guard = new ListingGuard(loop.bound, run, loop.pageToken);
  // The page after a page is asked for as soon as that page arrives, not when the loop below takes
  // it (which can be a few ms later, while it writes the page before): one page ahead at most, none
  // once the loop has stopped, and none after a page the guard will refuse. A page is read ahead
  // only once the loop has taken the page before it, so the guard has checked every page before
  // the one that arrived.
  let ahead: { token: string; page: Promise<DirectoryPage> } | undefined;
  let stopped = false;
  const readOn = (p: Promise<DirectoryPage>): Promise<DirectoryPage> => {
    p.then(
      (page) => {
        const next = page.nextPageToken;
        if (stopped || !next || ahead || guard.refusal(page)) return;
        ahead = { token: next, page: fetch(next) };
      },
      () => {}, // awaited below; this only keeps a prefetch failure from being "unhandled" meanwhile
    );
    return p;
  };
  const fetch = (pageToken: string | undefined): Promise<DirectoryPage> =>
    readOn(withRetry(() => source.fetchUsersPage({ pageToken, since: loop.since, attributes }), loop.policy, loop.observer, loop.signal));
  /** The page `pageToken` asks for: asked for already, or now. */
  const take = (pageToken: string): Promise<DirectoryPage> => {
    const p = ahead?.token === pageToken ? ahead.page : fetch(pageToken);
    ahead = undefined;
    return p;
  };
  const timer = new StageTimer(run.stage_ms);
  const statistics = new SyncStatistics();
  const width = ctx.config.SYNC_PAGE_CONCURRENCY;
  const inflight: InFlight[] = [];
  let previous: Promise<unknown> = Promise.resolve();
  let pending = loop.first ? readOn(loop.first) : fetch(loop.pageToken);
  /** The groups of users listed before the provider's memberships, written beside the listing (pendingGroups.ts). */
  let besideListing: Promise<void> | undefined;
  /** From the first page listed before them: the provider's memberships loaded, and how long pages wait for them. */
  let members: Members | undefined;
  try {
    for (;;) {
      const page = await timer.time('fetch_wait', () => pending);
      guard.check(page);
      if (page.nextPageToken) pending = take(page.nextPageToken);
      if (page.groupsPending && !members) {
        members = awaitMembers(source, loop);
        besideListing = writeGroupsBesideListing(ctx, source, run, loop, timer, members.loaded);
        besideListing.catch(() => {}); // awaited when the listing ends
      }
      // Text Postgres cannot store (NUL, lone surrogates, impossible addresses) is cleaned here,
      // once for every connector, before the fingerprints are computed, so an unchanged directory
      // still compares equal.
      const { users, errors: cleaning } = cleanPageUsers(page.users);
      // What the source decided without an optional lookup (page.problems) is reported beside them.
      const refused = [...cleaning, ...(page.problems ?? [])];
      const cleaned: DirectoryPage = { ...page, users, removedIds: page.removedIds.map(cleanText) };
      const keys = pageKeys(cleaned);
      await Promise.all(inflight.filter((w) => overlaps(w.keys, keys)).map((w) => w.done));
      let groups: PageGroups = { page: cleaned };
      if (members && page.groupsPending) {
        // People are written without their groups only where the page writes teammates (smart
        // fields wait) and more pages follow: the last page has no listing to keep going, and a
        // one-page directory, the most common, is written once.
        const late = loop.category === 'teammates' && !!page.nextPageToken && !(await timer.time('groups_wait', () => members!.within()));
        groups = late ? { page: cleaned, withoutGroups: true } : await groupsOfChanged(ctx, source, run, loop, cleaned, timer);
      }
      const before = previous;
      const done = withTx(ctx.pool, (client) => writeOnePage(client, run, loop, groups, refused, timer, () => timer.time('order_wait', () => before)));
      done.catch(() => {}); // awaited below, or by the page after it
      previous = done;
      inflight.push({ keys, done });
      while (inflight.length >= width || (!page.nextPageToken && inflight.length)) await statistics.afterPage(ctx.pool, await inflight.shift()!.done, timer);
      if (!page.nextPageToken) {
        await besideListing;
        return page.nextState;
      }
    }
  } finally {
    stopped = true;
    await Promise.allSettled([...inflight.map((w) => w.done), ...(besideListing ? [besideListing] : [])]);
  }
}

/**
 * How long, in all, the pages of a run wait for the provider's memberships, from the first page
 * listed before them. A small directory's members are listed well within it, so its new and
 * changed people wait and are written once, with their groups. A large one's take seconds (Google
 * lists 200 members a call, one call after another within a group): past this wait, pages with
 * more pages after them are written without their users' groups, which follow beside the listing
 * with the installs they ask for (src/sync/pendingGroups.ts; decision:
 * docs/decisions/write-before-groups.md). The last page waits: no listing is left to keep going.
 */
export const MEMBERS_WAIT_MS = 1000;

/** The provider's memberships, loading: `within` answers whether they are loaded within the run's wait (MEMBERS_WAIT_MS). */
interface Members {
  loaded: Promise<unknown>;
  within: () => Promise<boolean>;
}

function awaitMembers(source: DirectorySource, loop: PageLoop): Members {
  const groupsOf = sourceGroupsOf(source);
  const deadline = Date.now() + MEMBERS_WAIT_MS;
  let settled = false;
  // A source answers groupsOf for no users once its memberships are loaded. Should loading them
  // fail, the page's own groupsOf fails it the same way: that counts as settled here.
  const loaded = withRetry(() => groupsOf([]), loop.policy, loop.observer, loop.signal).finally(() => (settled = true));
  loaded.catch(() => {}); // awaited by the pages and by writeGroupsBesideListing
  const within = async (): Promise<boolean> => {
    const left = deadline - Date.now();
    if (settled || left <= 0) return settled;
    let timeout: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timeout = setTimeout(resolve, left)));
    await Promise.race([loaded.catch(() => {}), late]);
    clearTimeout(timeout);
    return settled;
  };
  return { loaded, within };
}

/**
 * A page's users and what is known of their groups: all listed with them (the provider's
 * memberships were loaded, or the source lists them with its users); some users unchanged but for
 * their groups (`pendingGroups`), the others with them; or all written without them
 * (`withoutGroups`: the provider's memberships were not loaded within the run's wait).
 */
interface PageGroups {
  page: DirectoryPage;
  pendingGroups?: Set<string>;
  withoutGroups?: boolean;
}

/**
 * A page listed before the provider's memberships were known (groupsPending), once they are (or
 * for smart fields, which wait for them): its users unchanged but for their groups are written
 * without them (their groups are compared beside the listing, src/sync/pendingGroups.ts); the
 * others, new or changed, get their groups from the source now, so that they are written once and
 * no install is asked for before a teammate's groups are known. Answers the page with those
 * groups, and who stays pending.
 */
async function groupsOfChanged(
  ctx: AppContext,
  source: DirectorySource,
  run: SyncRunRow,
  loop: PageLoop,
  page: DirectoryPage,
  timer: StageTimer,
): Promise<PageGroups> {
  const pendingGroups = await timer.time('match', () =>
    unchangedButGroups(ctx.pool, { integrationId: run.integration_id, fields: loop.fields, groupIds: loop.groupIds }, page.users),
  );
  const changed = page.users.filter((u) => !u.removed && !pendingGroups.has(u.externalId));
  if (!changed.length) return { page, pendingGroups };
  const groupsOf = sourceGroupsOf(source);
  const query = changed.map((u) => ({ externalId: u.externalId, emails: [...(u.primaryEmail ? [u.primaryEmail] : []), ...u.aliases] }));
  const groups = await timer.time('groups_wait', () => withRetry(() => groupsOf(query), loop.policy, loop.observer, loop.signal));
  return { page: { ...page, users: page.users.map((u) => (groups.has(u.externalId) ? { ...u, groups: groups.get(u.externalId)! } : u)) }, pendingGroups };
}

/**
 * One page's transaction, for a page already cleaned (`refused`: the users cleaning refused).
 * `ordered` waits for the page before it to commit. Answers how many teammates it created.
 */
async function writeOnePage(
  client: pg.PoolClient,
  run: SyncRunRow,
  loop: PageLoop,
  { page, pendingGroups, withoutGroups }: PageGroups,
  refused: RunErrorDetail[],
  timer: StageTimer,
  ordered: () => Promise<unknown>,
): Promise<number> {
  // A page whose commit is lost in a database crash loses its checkpoint with it and is written
  // again on resume (the writes are idempotent upserts), so the page need not wait for fsync.
  // Pages of one run never wait for each other's rows (see listPages); should anything else make
  // a wait circular, the page fails after a minute instead of hanging. (Both settings are local to
  // the transaction, set in one statement.)
  await client.query(`select set_config('synchronous_commit', 'off', true), set_config('lock_timeout', '60s', true)`);
  // Before the page writes anything (its events may take the workspace's webhook job row, which a
  // mailbox integration being connected takes too): see queueInstalls (installs.ts).
  await holdInstallers(client, run.workspace_id);
  await holdRun(client, run.id, loop.executor, false);
  const r: PageResult = await writePage(
    client,
    {
      workspaceId: run.workspace_id,
      integrationId: run.integration_id,
      runId: run.id,
      category: loop.category,
      fields: loop.fields,
      groupIds: loop.groupIds,
      ...(pendingGroups ? { pendingGroups } : {}),
      ...(withoutGroups ? { withoutGroups } : {}),
    },
    page.users,
    page.removedIds,
    timer,
    ordered,
  );
  await ordered();
  await holdRun(client, run.id, loop.executor);
  // People written without their groups are installed once their groups are written (pendingGroups.ts).
  if (r.changedTeammateIds.length && !withoutGroups) await timer.time('installs', () => queueInstalls(client, run.workspace_id, r.changedTeammateIds));
  // An unchanged user's photo reference is unchanged too (it is part of the fingerprint).
  if (loop.category === 'teammates') {
    const unchanged = new Set(r.unchangedExternalIds);
    const changed = unchanged.size ? page.users.filter((u) => !unchanged.has(u.externalId)) : page.users;
    await timer.time('photos', () => recordDirectoryPhotos(client, run.workspace_id, run.integration_id, changed, r.written));
  }
  await recordPage(
    client,
    run.id,
    {
      seen: r.seen,
      created: r.created,
      updated: r.updated,
      unchanged: r.unchanged,
      skipped: r.skipped + page.skipped.length,
      errors: refused.length + r.errors.length,
      errorDetails: [...refused, ...r.errors],
      nextPageToken: page.nextPageToken,
      stageMs: timer.ms,
    },
    MAX_ERROR_DETAILS,
  );
  return r.created;
}
