/**
 * Group memberships written after the users listing, for users listed before the provider's
 * memberships were known and unchanged but for their groups.
 *
 * Google lists a group's members at most 200 a call, one call after another, so the members of a
 * large directory take as long to list as its users. The connector returns the users pages that
 * arrive before they are loaded with `groupsPending`. Of such a page, the new and changed people
 * wait for their groups (src/sync/pages.ts asks the source's `groupsOf`) and are written with
 * them; the others, unchanged but for their groups, are only recorded as seen and marked in the
 * run's seen list (src/sync/write.ts). When the listing ends, this asks the source for their
 * groups and writes those that changed, in batches, each in one transaction that checks the run
 * is still this execution's, writes the memberships with the groups part of the fingerprints, and
 * asks for the installs of the teammates whose memberships changed. A crash in between is
 * harmless: the next execution of the run compares the marked users again, and those written
 * already compare equal; a failed run leaves them, and the next run lists everyone again.
 */
import type { DirectorySource } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { requestTeammateInstalls } from '../install/triggers.ts';
import { withRetry, type RetryPolicy } from './retry.ts';
import { getRun, holdRun, pendingGroupsBatch, saveStageMs, type SyncRunRow } from './runs.ts';
import { StageTimer } from './timing.ts';
import { writePendingGroups } from './write.ts';

const BATCH = 5000;

export interface PendingGroupsLoop {
  executor: string;
  groupIds: ReadonlyMap<string, string>;
  policy: RetryPolicy;
  observer: Parameters<typeof withRetry>[2];
}

/** The source's groupsOf: a source that lists users before their groups must answer them. */
export function sourceGroupsOf(source: DirectorySource): NonNullable<DirectorySource['groupsOf']> {
  if (!source.groupsOf) throw new Error('the directory source listed users before their groups (groupsPending) but cannot answer their groups (groupsOf)');
  return source.groupsOf.bind(source);
}

/** Writes the groups of every user of the run whose groups are pending. */
export async function writeGroupsAfterListing(ctx: AppContext, source: DirectorySource, run: SyncRunRow, loop: PendingGroupsLoop): Promise<void> {
  let timer: StageTimer | undefined;
  let after = '';
  for (;;) {
    const batch = await pendingGroupsBatch(ctx.pool, run.id, run.integration_id, after, BATCH);
    if (!batch.length) return;
    after = batch.at(-1)!.external_id;
    const t = (timer ??= new StageTimer((await getRun(ctx.pool, run.id))?.stage_ms));
    // Users the run did not store (no address, an address another teammate holds) have no source.
    const stored = batch.filter((r) => r.teammate_id !== null);
    const groupsOf = sourceGroupsOf(source);
    const groups = stored.length ? await t.time('groups_wait', () => withRetry(() => groupsOf(stored.map((r) => ({ externalId: r.external_id, emails: r.emails }))), loop.policy, loop.observer)) : new Map<string, string[]>();
    await withTx(ctx.pool, async (client) => {
      await holdRun(client, run.id, loop.executor);
      const changed = await t.time('memberships', () =>
        writePendingGroups(
          client,
          { workspaceId: run.workspace_id, integrationId: run.integration_id, groupIds: loop.groupIds },
          stored.map((r) => ({ ext_id: r.external_id, teammate_id: r.teammate_id!, fingerprint: r.fingerprint, groups: groups.get(r.external_id) ?? [] })),
        ),
      );
      if (changed.length) await t.time('installs', () => requestTeammateInstalls(client, run.workspace_id, changed));
      await saveStageMs(client, run.id, t.ms);
    });
  }
}
