/**
 * Writes one page of directory users in one transaction: what the sync engine decides about a page
 * before the teammate aggregate merges it (src/teammates/directoryPage.ts, mergeDirectoryPage),
 * in named stages whose times add up in the run's `stage_ms` (src/sync/timing.ts):
 *
 *   prepare      in-page checks (no address, an address twice, a user twice), fingerprints (no SQL)
 *   match        unchanged users (same fingerprint as stored) are only recorded as seen
 *   stage        the page's rows: addresses, values checked by their field's kind, groups
 *   ...          the merge (mergeDirectoryPage: stage, match, teammates, addresses, memberships,
 *                values, events)
 *   seen         who the run saw (src/integrations/syncRuns.ts)
 */
import type pg from 'pg';
import type { Queryable } from '../db/tx.ts';
import type { DirectoryUser } from '../../connectors/types.ts';
import { attribute, baseFingerprint, fingerprint, groupsFingerprint } from './fingerprint.ts';
import { KIND_EXPECTS, valueFitsKind, type SmartFieldKind } from '../render/kinds.ts';
import { recordSeen } from '../integrations/syncRuns.ts';
import { mergeDirectoryPage, unchangedSources, type DirectoryPageRows } from '../teammates/directoryPage.ts';
import { mergeKnownGroups } from '../teammates/teammates.ts';
import { StageTimer } from './timing.ts';

export interface MappedField {
  id: string;
  attribute: string;
  /** The field's kind: a directory value that does not fit it is left empty and reported. */
  kind: SmartFieldKind;
}

export interface PageContext {
  workspaceId: string;
  integrationId: string;
  runId: string;
  /** `teammates` creates and updates teammates; `smart_fields` only updates values of existing ones. */
  category: 'teammates' | 'smart_fields';
  fields: MappedField[];
  /** group/org-unit external id -> groups.id for this integration. */
  groupIds: ReadonlyMap<string, string>;
  /**
   * Users listed before the provider's group memberships were known (DirectoryPage
   * `groupsPending`) and unchanged but for their groups (unchangedButGroups): they are only recorded
   * as seen, their groups compared and written once the provider has them (src/sync/pendingGroups.ts).
   * The page's other users come with their groups.
   */
  pendingGroups?: ReadonlySet<string>;
  /**
   * The page's users are written without their groups (the provider's memberships were not loaded
   * within the run's wait, src/sync/pages.ts): fingerprinted `base.` (groups unknown), only their
   * org units written, and every user recorded as seen with its groups pending, so that their
   * groups, and the installs of those written, follow (src/sync/pendingGroups.ts).
   */
  withoutGroups?: boolean;
}

export interface RunErrorDetail {
  externalId: string;
  email?: string;
  message: string;
}

export interface PageResult {
  seen: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  errors: RunErrorDetail[];
  /** Teammates whose signature inputs changed (new, names, emails or smart-field values). */
  changedTeammateIds: string[];
  /** Directory users found unchanged (same fingerprint), only recorded as seen. */
  unchangedExternalIds: string[];
  /** The users written, external id -> teammate id. */
  written: ReadonlyMap<string, string>;
}

const norm = (email: string) => email.trim().toLowerCase();

interface Prepared {
  active: DirectoryUser[];
  removed: Set<string>;
  skipped: number;
  errors: RunErrorDetail[];
}

/** In-page checks: users without an address are skipped; an address used twice keeps its first user. */
function prepare(users: DirectoryUser[], removedIds: string[]): Prepared {
  const out: Prepared = { active: [], removed: new Set(removedIds), skipped: 0, errors: [] };
  const seenEmails = new Map<string, string>();
  // A user listed twice in one page (incremental listings may repeat one) counts once, last wins.
  const latest = new Map(users.map((u) => [u.externalId, u]));
  for (const u of latest.values()) {
    if (u.removed) {
      out.removed.add(u.externalId);
      continue;
    }
    if (!u.primaryEmail) {
      out.skipped++;
      continue;
    }
    const e = norm(u.primaryEmail);
    const owner = seenEmails.get(e);
    if (owner !== undefined) {
      out.errors.push({ externalId: u.externalId, email: u.primaryEmail, message: `email ${u.primaryEmail} also belongs to directory user ${owner}; skipped` });
      continue;
    }
    seenEmails.set(e, u.externalId);
    out.active.push(u);
  }
  return out;
}

const fieldsSignatureOf = (fields: readonly MappedField[]) => fields.map((f) => `${f.id}=${f.attribute}:${f.kind}`).join(',');

/**
 * Of users listed before their groups were known, those unchanged but for their groups (the first
 * part of their fingerprint is the stored one's): they need not wait for the groups.
 */
export async function unchangedButGroups(
  db: Queryable,
  ctx: Pick<PageContext, 'integrationId' | 'fields' | 'groupIds'>,
  users: readonly DirectoryUser[],
): Promise<Set<string>> {
  const signature = fieldsSignatureOf(ctx.fields);
  const bases = new Map(users.map((u) => [u.externalId, `${baseFingerprint(u, ctx.fields, ctx.groupIds, signature)}.`]));
  return new Set(bases.size ? await unchangedSources(db, ctx.integrationId, bases) : []);
}

/** The page's rows for the merge; a value its field's kind refuses is reported in `errors`. */
function pageRows(ctx: PageContext, active: DirectoryUser[], fingerprints: Map<string, string>, errors: RunErrorDetail[]): DirectoryPageRows {
  const rows: DirectoryPageRows = { users: [], emails: [], values: [], groups: [] };
  for (const u of active) {
    rows.emails.push({ ext_id: u.externalId, address: u.primaryEmail!.trim(), is_primary: true });
    for (const a of new Set(u.aliases.map((x) => x.trim()).filter((x) => x && norm(x) !== norm(u.primaryEmail!)))) {
      rows.emails.push({ ext_id: u.externalId, address: a, is_primary: false });
    }
    for (const f of ctx.fields) {
      const v = attribute(u, f.attribute);
      if (v === undefined || v === '') continue;
      // A value its field's kind refuses (a url field holding `javascript:...`) is left empty, as if
      // the directory had none, and reported on the run (without the value itself).
      if (valueFitsKind(f.kind, v)) rows.values.push({ ext_id: u.externalId, field_id: f.id, value: v });
      else errors.push({ externalId: u.externalId, email: u.primaryEmail!, message: `${f.attribute}: the value is not ${KIND_EXPECTS[f.kind]}; left empty` });
    }
    for (const g of new Set([...u.groups, ...u.orgUnits])) {
      const id = ctx.groupIds.get(g);
      if (id) rows.groups.push({ ext_id: u.externalId, group_id: id });
    }
  }
  rows.users = active.map((u) => ({
    ext_id: u.externalId,
    display_name: u.displayName,
    given_name: u.givenName,
    family_name: u.familyName,
    email: u.primaryEmail!.trim(),
    photo_ref: u.photo ? (u.photo.etag ?? u.photo.url ?? null) : null,
    fingerprint: fingerprints.get(u.externalId)!,
    // Null when the directory does not tell: the teammate keeps its mark.
    shared_mailbox: u.sharedMailbox ?? null,
  }));
  return rows;
}

/**
 * Writes one page. `shared` is awaited before the first write to rows that other pages of the run
 * may write too (the events, whose trigger queues the webhook dispatch under one job key per
 * workspace); pages written at once (pages.ts) pass a wait for the page before to commit.
 */
export async function writePage(
  client: pg.PoolClient,
  ctx: PageContext,
  users: DirectoryUser[],
  removedIds: string[],
  timer = new StageTimer(),
  shared: () => Promise<unknown> = async () => {},
): Promise<PageResult> {
  const { active: listed, removed, errors, ...rest } = prepare(users, removedIds);
  let skipped = rest.skipped;
  // The kinds are part of the signature: values stored before they were checked by kind are
  // written once more, checked.
  const fieldsSignature = fieldsSignatureOf(ctx.fields);
  // A user whose groups are pending and who is written anyway (on a page of smart fields) is
  // fingerprinted without them: the groups part stays empty.
  const pending = ctx.pendingGroups ?? new Set<string>();
  const fingerprintOf = (u: DirectoryUser) =>
    ctx.withoutGroups || pending.has(u.externalId)
      ? `${baseFingerprint(u, ctx.fields, ctx.groupIds, fieldsSignature)}.`
      : fingerprint(u, ctx.fields, ctx.groupIds, fieldsSignature);
  // On a page whose groups are pending, the caller found who is unchanged but for the groups
  // (unchangedButGroups), and only the others are fingerprinted; they are new or changed (pages of
  // one run are written by one execution, and pages sharing a person one after another, so that
  // still holds).
  const foundByCaller = ctx.category === 'teammates' && ctx.pendingGroups ? listed.map((u) => u.externalId).filter((id) => pending.has(id)) : undefined;
  const fingerprints = new Map((foundByCaller ? listed.filter((u) => !pending.has(u.externalId)) : listed).map((u) => [u.externalId, fingerprintOf(u)]));
  const unchanged =
    foundByCaller ??
    (ctx.category !== 'teammates' || !listed.length ? [] : await timer.time('match', () => unchangedSources(client, ctx.integrationId, fingerprints)));
  const same = new Set(unchanged);
  const active = listed.filter((u) => !same.has(u.externalId));
  // The unchanged users the caller found are the pending ones: they are seen with their groups pending.
  const recordSeenUsers = async (written: string[]) => {
    if (ctx.withoutGroups) return recordSeen(client, ctx.runId, [...unchanged, ...written], [...removed], true);
    await recordSeen(client, ctx.runId, foundByCaller ? written : [...unchanged, ...written], [...removed]);
    if (foundByCaller?.length) await recordSeen(client, ctx.runId, foundByCaller, [], true);
  };

  if (!active.length) {
    await timer.time('seen', () => recordSeenUsers([]));
    return {
      seen: unchanged.length,
      created: 0,
      updated: 0,
      unchanged: unchanged.length,
      skipped,
      errors,
      changedTeammateIds: [],
      unchangedExternalIds: unchanged,
      written: new Map(),
    };
  }

  const rows = await timer.time('stage', async () => pageRows(ctx, active, fingerprints, errors));
  const merged = await mergeDirectoryPage(
    client,
    {
      workspaceId: ctx.workspaceId,
      integrationId: ctx.integrationId,
      category: ctx.category,
      fieldIds: ctx.fields.map((f) => f.id),
      groupsKnown: !ctx.withoutGroups,
    },
    rows,
    { timer, seen: (written) => timer.time('seen', () => recordSeenUsers(written)), shared },
  );
  errors.push(...merged.problems);
  skipped += merged.unmatched;
  const written = merged.written.size;
  const createdIds = new Set(merged.createdIds);
  const changedTeammateIds = merged.changedTeammateIds;
  const updated = changedTeammateIds.filter((id) => !createdIds.has(id)).length;
  return {
    seen: written + unchanged.length,
    created: createdIds.size,
    updated,
    unchanged: written - createdIds.size - updated + unchanged.length,
    skipped,
    errors,
    changedTeammateIds,
    unchangedExternalIds: unchanged,
    written: merged.written,
  };
}

export interface PendingGroupsRow {
  ext_id: string;
  teammate_id: string;
  /** The stored fingerprint, `base.groups`. */
  fingerprint: string | null;
  /** The groups the provider now lists the user in (external ids). */
  groups: string[];
}

/**
 * Writes the group memberships of users listed before their groups were known (pendingGroups.ts):
 * only where the groups part of their fingerprint differs, by the teammate aggregate
 * (mergeKnownGroups). Answers the teammates to install: those whose memberships changed,
 * and those this run wrote without their groups (a stored fingerprint `base.`, or none: an alias
 * refused on the way), whose installs waited for them.
 */
export async function writePendingGroups(
  client: pg.PoolClient,
  ctx: Pick<PageContext, 'workspaceId' | 'integrationId' | 'groupIds'>,
  rows: readonly PendingGroupsRow[],
): Promise<string[]> {
  const changed = rows.map((r) => ({ ...r, part: groupsFingerprint(r.groups, ctx.groupIds) })).filter((r) => r.fingerprint?.split('.')[1] !== r.part);
  if (!changed.length) return [];
  const moved = await mergeKnownGroups(
    client,
    ctx.workspaceId,
    ctx.integrationId,
    changed.map((r) => ({ ext_id: r.ext_id, part: r.part, group_ids: [...new Set(r.groups.flatMap((g) => ctx.groupIds.get(g) ?? []))] })),
  );
  const writtenWithout = changed.filter((r) => r.fingerprint === null || r.fingerprint.endsWith('.')).map((r) => r.teammate_id);
  return [...new Set([...moved, ...writtenWithout])];
}
