/**
 * Group memberships of users listed before the provider's memberships were known, written once
 * they are: beside the rest of the listing, and for the last of them when the listing ends.
 *
 * Google lists a group's members at most 200 a call, one call after another, so the members of a
 * large directory take as long to list as its users. The connector returns the users pages that
 * arrive before they are loaded with `groupsPending`. Of such a page, the people unchanged but for
 * their groups are only recorded as seen and marked pending in the run's seen list
 * (src/sync/write.ts). The new and changed people wait for their groups (src/sync/pages.ts asks the
 * source's `groupsOf`) and are written with them, as long as the memberships load within the run's
 * wait (MEMBERS_WAIT_MS); past it they are written without their groups (fingerprint `base.`, org
 * units only), marked pending too, and their installs wait for their groups: a batch asks for the
 * installs of the teammates whose memberships changed and of those written without their groups
 * (src/sync/write.ts, writePendingGroups). From the first such page, the listing also waits in
 * the background for the source's memberships; once they are loaded, the marked users are taken
 * in batches while the listing goes on, and the users marked after that (pages in flight) when it
 * ends. Each batch is one transaction that checks the run is still this execution's, writes the
 * memberships that changed with the groups part of the fingerprints, asks for the installs of the
 * teammates whose memberships changed, and takes the batch off the pending list. A crash in
 * between is harmless: the next execution of the run takes the users still marked; a failed run
 * leaves them, and the next run lists everyone again.
 */
import type { DirectorySource } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { holdInstallers } from '../integrations/integrations.ts';
import { queueInstalls } from './installs.ts';
import { withRetry, type RetryPolicy } from './retry.ts';
import { clearPendingGroups, getRun, holdRun, pendingGroupsUsers, saveStageMs, type SyncRunRow } from '../integrations/syncRuns.ts';
import { sourcesOf } from '../teammates/queries.ts';
import { StageTimer } from './timing.ts';
import { writePendingGroups } from './write.ts';

const BATCH = 5000;

export interface PendingGroupsLoop {
  executor: string;
  groupIds: ReadonlyMap<string, string>;
  policy: RetryPolicy;
  observer: Parameters<typeof withRetry>[2];
  /** Aborted when the run no longer wants answers (its listing stopped, its worker is stopping). */
  signal?: AbortSignal | undefined;
}

/** The source's groupsOf: a source that lists users before their groups must answer them. */
export function sourceGroupsOf(source: DirectorySource): NonNullable<DirectorySource['groupsOf']> {
  if (!source.groupsOf) throw new Error('the directory source listed users before their groups (groupsPending) but cannot answer their groups (groupsOf)');
  return source.groupsOf.bind(source);
}

/**
 * Beside the listing, from its first `groupsPending` page: waits for the source's memberships (`loaded`), then
 * writes the groups of the users marked pending so far (and of those marked meanwhile). `timer` is
 * the listing's own, so that the stages of both are saved together.
 */
export async function writeGroupsBesideListing(
  ctx: AppContext,
  source: DirectorySource,
  run: SyncRunRow,
  loop: PendingGroupsLoop,
  timer: StageTimer,
  loaded: Promise<unknown>,
): Promise<void> {
  await loaded;
  await writeGroupsAfterListing(ctx, source, run, loop, timer);
}

/** Up to `limit` of the run's pending users, with their source's teammate, fingerprint and addresses (none without a source). */
async function pendingGroupsBatch(
  ctx: AppContext,
  run: SyncRunRow,
  limit: number,
): Promise<{ external_id: string; teammate_id: string | null; fingerprint: string | null; emails: string[] }[]> {
  const ids = await pendingGroupsUsers(ctx.pool, run.id, limit);
  if (!ids.length) return [];
  const sources = await sourcesOf(ctx.pool, run.integration_id, ids);
  return ids.map((id) => ({ external_id: id, teammate_id: null, fingerprint: null, emails: [], ...sources.get(id) }));
}

/**
 * Writes the groups of the run's pending users, a batch at a time, until none is left: when the
 * listing has ended, for the users still pending (`timer`: the run's saved stages by default).
 */
export async function writeGroupsAfterListing(
  ctx: AppContext,
  source: DirectorySource,
  run: SyncRunRow,
  loop: PendingGroupsLoop,
  timer?: StageTimer,
): Promise<void> {
  let runTimer = timer;
  for (;;) {
    const batch = await pendingGroupsBatch(ctx, run, BATCH);
    if (!batch.length) return;
    const stageTimer = (runTimer ??= new StageTimer((await getRun(ctx.pool, run.id))?.stage_ms));
    // Users the run did not store (no address, an address another teammate holds) have no source.
    const stored = batch.filter((r) => r.teammate_id !== null);
    const groupsOf = sourceGroupsOf(source);
    const groups = stored.length
      ? await stageTimer.time('groups_wait', () =>
          withRetry(() => groupsOf(stored.map((r) => ({ externalId: r.external_id, emails: r.emails }))), loop.policy, loop.observer, loop.signal),
        )
      : new Map<string, string[]>();
    await withTx(ctx.pool, async (client) => {
      // As a page does: the installers lock first, so that the installs asked for below are
      // asked for exactly when the workspace has somewhere to install them (installs.ts).
      await holdInstallers(client, run.workspace_id);
      await holdRun(client, run.id, loop.executor, false);
      const changed = await stageTimer.time('memberships', () =>
        writePendingGroups(
          client,
          { workspaceId: run.workspace_id, integrationId: run.integration_id, groupIds: loop.groupIds },
          stored.map((r) => ({ ext_id: r.external_id, teammate_id: r.teammate_id!, fingerprint: r.fingerprint, groups: groups.get(r.external_id) ?? [] })),
        ),
      );
      await clearPendingGroups(
        client,
        run.id,
        batch.map((r) => r.external_id),
      );
      // Locked only now, as a page does (pages.ts), so the pages written meanwhile do not wait for
      // the batch; and before the installs are asked for, in a page's order (the run, then the
      // queue's rows), so that a page and a batch never wait for each other.
      await holdRun(client, run.id, loop.executor);
      if (changed.length) await stageTimer.time('installs', () => queueInstalls(client, run.workspace_id, changed));
      await saveStageMs(client, run.id, stageTimer.ms);
    });
  }
}
