/**
 * Connector contracts: how the engine talks to a provider, one contract per category.
 *
 * Glossary
 * - connector: the code for one provider and one category, in connectors/<provider>/.
 * - directory source (categories `teammates`, `smart_fields`): lists users page by page as clean
 *   `DirectoryUser`s, plus groups and org units. A source may support incremental listings
 *   (`incremental: true`), resuming from the state the last complete listing returned.
 * - mailbox installer (category `signatures`): writes rendered HTML into one mailbox.
 * - photo source (category `assets`): fetches a user's directory photo.
 * - page token: the provider's cursor. The engine stores the token after each written page, so
 *   a crashed run resumes where it stopped.
 *
 * Every provider response is parsed with a raw zod schema named after the provider resource
 * (connectors/<provider>/schemas.ts). A response that does not parse is an `InvalidResponseError`
 * and fails the run. Provider errors become a `ConnectorError` with a stable `code`; the engine
 * decides retry or transition from the code alone.
 */
import type { UrlPolicy } from '../src/net/ssrf.ts';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ConnectorKind } from './kinds.ts';

// Errors: connectors/errors.ts (re-exported here, with the contracts that raise them) ------------
export * from './errors.ts';

// Directory -------------------------------------------------------------------------------------
export const directoryUserSchema = z.object({
  /** The provider's stable id for the user. */
  externalId: z.string().min(1),
  /** Null when the provider has none; such users are skipped and counted. */
  primaryEmail: z.string().nullable(),
  /** Other addresses of the same mailbox. */
  aliases: z.array(z.string()),
  givenName: z.string().nullable(),
  familyName: z.string().nullable(),
  displayName: z.string(),
  /** Suspended, archived, disabled or deleted: treated as removed. */
  removed: z.boolean(),
  /** A shared mailbox (not a person): a teammate with its own values. Unset: the provider does not tell (the stored mark is kept). */
  sharedMailbox: z.boolean().optional(),
  /** Flat attribute map: `name.givenName`, `organizations.primary.title`, `phones.work`, `customSchemas.Sales.Region`... */
  attributes: z.record(z.string(), z.string()),
  /** External ids of the groups the user belongs to (directly or transitively). */
  groups: z.array(z.string()),
  /** External ids (paths) of the org units the user sits in, the nearest first. */
  orgUnits: z.array(z.string()),
  /** Where the photo comes from, when there is one; `etag` changes when the photo does. */
  photo: z.object({ url: z.string().optional(), etag: z.string().optional() }).nullable(),
});
export type DirectoryUser = z.infer<typeof directoryUserSchema>;

export interface DirectoryGroup {
  externalId: string;
  kind: 'group' | 'org_unit';
  name: string;
  email?: string | null;
  /** Org unit path, e.g. /Sales/EMEA. */
  path?: string | null;
}

/** State an incremental source hands back after a complete listing, for the next run. */
export interface IncrementalState {
  token: string;
  /** When the provider issued it; sources refuse tokens older than their documented lifetime. */
  obtainedAt: string;
}

export interface DirectoryPage {
  users: DirectoryUser[];
  /** Users an incremental listing reports as removed (e.g. Graph `@removed`). Empty for full listings. */
  removedIds: string[];
  /** Users left out on purpose (bots, no email), with the reason. */
  skipped: { externalId: string; reason: string }[];
  /** Users written as the source decided without an optional lookup that failed for them: the run's error_details. */
  problems?: { externalId: string; email?: string; message: string }[];
  /** The token that fetches the next page; null on the last page. */
  nextPageToken: string | null;
  /** On the last page of a listing: the state for the next incremental run, when the source has one. */
  nextState?: IncrementalState;
  /**
   * The page was listed before the provider's group memberships were known: its users' `groups`
   * are empty, to be asked for with `groupsOf` once they are (their `orgUnits` are known).
   */
  groupsPending?: boolean;
}

/** A user whose groups are asked for once they are known: its id, and its addresses as stored. */
export interface GroupsQuery {
  externalId: string;
  emails: string[];
}

export interface FetchUsersOptions {
  /** The page to fetch; undefined for the first page. */
  pageToken?: string;
  /** Incremental listing from this state; undefined for a full listing. */
  since?: IncrementalState;
  /**
   * The attribute paths smart fields map from. A source may skip costly per-user lookups (e.g.
   * Slack custom profile fields) when no smart field needs them. Undefined means "all you can".
   */
  attributes?: readonly string[];
}

export interface DirectorySource {
  /** Whether `since` is honoured (delta listings). Full listings remain available. */
  readonly incremental: boolean;
  /** One cheap call that proves the credentials work (used when connecting). */
  checkAccess(): Promise<void>;
  /** One page of users. Throws ConnectorError (or CursorExpiredError for a stale `since`). */
  fetchUsersPage(opts: FetchUsersOptions): Promise<DirectoryPage>;
  /** Every group and org unit, with their external ids. Memberships are on the users. */
  listGroups(): Promise<DirectoryGroup[]>;
  /**
   * The groups (external ids) of users listed on a `groupsPending` page, by external id. A source
   * that returns such pages implements it; it answers once its memberships are loaded (for no
   * users too: the engine asks that way to learn when they are).
   */
  groupsOf?(users: readonly GroupsQuery[]): Promise<Map<string, string[]>>;
}

// Mailbox installs ------------------------------------------------------------------------------
export interface MailboxTarget {
  /** The address the signature is for. */
  email: string;
  /** The teammate's other addresses (aliases) known to the directory. */
  aliases: string[];
  /** The user's id at this provider, when the directory knows it. */
  externalId?: string | undefined;
  displayName?: string;
}

export interface RenderedSignature {
  html: string;
  text: string;
  hash: string;
  kind: 'primary' | 'reply' | 'internal';
}

export interface InstallResult {
  /** The provider's answer, secrets removed, kept for the support replay. */
  providerResponse: unknown;
}

export interface InstallOptions {
  /**
   * Write even where the destination already shows this signature (a forced re-install). Otherwise
   * an installer that can read the current signature may skip writing an identical one, so that a
   * job retried after a partial install (a 429 on the second address) does not write the first again.
   */
  force?: boolean;
  /**
   * What this installer reported about the mailbox the last time (`onState`), kept by the engine
   * (Gmail: its send-as addresses as last listed, so that it can write without reading first).
   */
  state?: unknown;
  /**
   * Told the installer's new state of the mailbox, as soon as it changes (also before an error
   * ends the install, so that a retry knows which addresses were already written); null forgets it.
   */
  onState?: (state: unknown) => void;
}

/** What a credentials check could not prove, in a sentence for the admin; null when it proved all. */
export type AccessCheck = { unchecked: string | null };

export interface MailboxInstaller {
  /** One cheap call proving the credentials without writing (connect); else the first install does. */
  checkAccess?(): Promise<AccessCheck>;
  /** Signature kinds the destination can hold separately. */
  readonly slots: readonly RenderedSignature['kind'][];
  /** Largest HTML the destination accepts, in characters. */
  readonly maxHtmlLength: number;
  install(target: MailboxTarget, signature: RenderedSignature, opts?: InstallOptions): Promise<InstallResult>;
  /**
   * What `install` will take of the provider's quota for this mailbox, counted in provider write
   * requests: the engine reserves it from the integration's pace before the call
   * (src/installations/pace.ts). A call the provider charges less than a write counts for its share (a
   * Gmail sendAs listing is 0.01). Default: 1.
   */
  quotaCostFor?(target: MailboxTarget, opts?: InstallOptions): number;
}

// Photos ----------------------------------------------------------------------------------------
export interface Photo {
  contentType: string;
  data: Buffer;
  etag?: string;
}

export interface PhotoSource {
  /** The user's photo, or null when the user has none. */
  fetchPhoto(user: { externalId: string; photo: DirectoryUser['photo'] }): Promise<Photo | null>;
}

// Definitions -----------------------------------------------------------------------------------
export interface ConnectorContext<Config, Credentials> {
  config: Config;
  credentials: Credentials;
  logger: Logger;
  /**
   * The SSRF rule for the config's own URLs (src/integrations/urls.ts), for connectors that fetch
   * from them themselves (Slack photos). Unset (tests building a connector directly): not guarded.
   */
  urlPolicy?: UrlPolicy;
  /** Aborted when no answer is wanted any more (a sync's worker stopping): requests in flight, token ones too, are cancelled. */
  signal?: AbortSignal;
}

/** Config keys every connector accepts: provider base URL overrides. */
export const baseConfigSchema = z.object({
  /** Provider API base URL override (sovereign clouds, the sandbox, tests). */
  base_url: z.url().optional(),
  /** Token endpoint override. */
  token_url: z.url().optional(),
  /**
   * Installs: the provider requests per second this integration may make, where the customer knows
   * the quota. Installs start at 98% of it instead of learning it from 429s (which still lower it).
   */
  quota_per_s: z.number().positive().max(100_000).optional(),
});

/**
 * What the engine needs to know about a connector, declared by the connector, so that the engine
 * never compares provider kind names. Every flag defaults to the common case.
 */
export interface ConnectorCapabilities {
  /**
   * Mailbox installers: `mailbox` (the default) writes the person's signature into a mailbox slot,
   * and an address is installed by one such integration; `additional` delivers the signature
   * beside it (a Slack DM), to every address, never instead of a mailbox.
   */
  delivery?: 'mailbox' | 'additional';
  /**
   * Mailbox installers: with integration config `mode: "addin"` nothing is pushed; the provider's
   * add-in fetches the rendered signature (GET /v1/addin/signature). Default false.
   */
  addinMode?: boolean;
  /**
   * Photo sources: the listing carries no photo version (a constant URL), so photos are downloaded
   * again after a while and kept only when the bytes changed. Default false.
   */
  unversionedPhotos?: boolean;
}

export interface ConnectorDefinition<C extends z.ZodType, K extends z.ZodType, T> {
  kind: ConnectorKind;
  /** OAuth scopes or permissions the admin must grant (shown in docs and errors). */
  scopes: readonly string[];
  /** See ConnectorCapabilities; absent means every default. */
  capabilities?: ConnectorCapabilities;
  configSchema: C;
  credentialsSchema: K;
  /**
   * Mailbox installers: the largest signature HTML, in characters, the destination takes with this
   * config. The one home of each provider's limit: the installer built by `create` keeps to it, the
   * engine checks it before any provider call, and the compatibility report measures against it.
   */
  maxHtmlLength?: (config: z.infer<C>) => number;
  create(ctx: ConnectorContext<z.infer<C>, z.infer<K>>): T;
}

export function defineDirectorySource<C extends z.ZodType, K extends z.ZodType>(def: ConnectorDefinition<C, K, DirectorySource>) {
  return def;
}

export function defineMailboxInstaller<C extends z.ZodType, K extends z.ZodType>(def: ConnectorDefinition<C, K, MailboxInstaller>) {
  return def;
}

export function definePhotoSource<C extends z.ZodType, K extends z.ZodType>(def: ConnectorDefinition<C, K, PhotoSource>) {
  return def;
}
