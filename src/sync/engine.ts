/**
 * The directory sync engine: executes one sync run.
 *
 *   fetch page 1, and beside it: listGroups -> upsert groups and org units
 *   page 1 arrives ─┬─ write page 1 (one transaction: upsert + seen + counters + checkpoint)
 *                   └─ fetch page 2 (asked for as page 1 arrives, written after it) ...
 *   complete listing -> removals (deletion guard) -> save the incremental cursor -> succeeded
 *
 * Directory text is cleaned first, for every connector (src/sync/clean.ts: no NUL, no lone
 * surrogates; addresses the database cannot hold are reported and left out).
 *
 * Deletions happen only after a complete listing: a run that fails or is cut off part-way deletes
 * nothing. A crashed run resumes from its checkpoint (the page token after the last written page);
 * the seen set is in Postgres, so resuming adds no duplicates. One execution of a run writes at a
 * time (src/integrations/syncRuns.ts: claimRun, holdRun); an execution another one took over stops without writing.
 * A worker that stops aborts its job's signal: the connector's requests in flight are cancelled
 * (they carry the signal), nothing is retried, and the run stays `running` with its checkpoint
 * for the job's next attempt (RunInterruptedError).
 * The page loop, and the listings it refuses, are in pages.ts.
 */
import type { Logger } from 'pino';
import {
  AccessLostError,
  ConnectorError,
  CursorExpiredError,
  type DirectoryPage,
  type DirectorySource,
  type IncrementalState,
} from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { buildConnector, getIntegration, IntegrationSetupError, markAccessLost, saveSyncCursor, type IntegrationRow } from '../integrations/integrations.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';
import {
  claimRun,
  countRateLimitWait,
  finishRun,
  getRun,
  holdRun,
  lastCompleteRunSeen,
  restartAsFull,
  RunTakenOverError,
  setRunMode,
  type SyncRunRow,
} from '../integrations/syncRuns.ts';
import type { MappedField } from './write.ts';
import { requestPhotoSync, requestSeatSync, requestTeammateInstalls } from '../jobs/triggers.ts';
import { integrationIdsOfKind } from '../integrations/queries.ts';
import { hasBillingAccount } from '../billing/billing.ts';
import { cleanDirectoryGroup } from './clean.ts';
import { syncGroups } from '../teammates/groups.ts';
import { defaultListingBound, listPages, type ListingBound } from './pages.ts';
import { writeGroupsAfterListing } from './pendingGroups.ts';
import { removeSources } from '../teammates/teammates.ts';
import { countSources } from '../teammates/queries.ts';
import { unlistedSources } from './unlistedSources.ts';
import { mappedFields } from '../db/smartFields.ts';

/** Incremental tokens are trusted for this long; a full listing also runs at least this often. */
export const FULL_SYNC_EVERY_MS = 7 * 24 * 3600 * 1000;

export interface DeletionGuard {
  /** Largest share of the integration's teammates one run may remove without confirmation. Default 0.2. */
  maxShare: number;
  /** The guard applies only when the integration has more teammates than this. Default 10. */
  minTeammates: number;
}

export const DEFAULT_GUARD: DeletionGuard = { maxShare: 0.2, minTeammates: 10 };

export interface ExecuteOptions {
  retry?: RetryPolicy;
  /** The job's last attempt: a retryable failure then fails the run instead of waiting for a retry. */
  lastAttempt?: boolean;
  logger?: Logger;
  /** The most pages and users a listing may have for a directory of this known size (pages.ts). */
  listingBound?: (knownUsers: number) => ListingBound;
  /**
   * The job's abort signal, aborted when its worker stops: the connector's requests are cancelled
   * and the run is left `running` at its checkpoint for the job's next attempt (on the last
   * attempt it fails instead, so that no run stays running without a job to carry it on).
   */
  signal?: AbortSignal;
}

/**
 * The execution stopped because its worker is stopping (ExecuteOptions.signal): the job fails with
 * it and runs again later, resuming the run from its checkpoint.
 */
export class RunInterruptedError extends Error {
  override readonly name = 'RunInterruptedError';
}

function guardFrom(config: Record<string, unknown>): DeletionGuard {
  const g = (config.deletion_guard ?? {}) as Partial<{ max_share: number; min_teammates: number }>;
  return {
    maxShare: typeof g.max_share === 'number' ? g.max_share : DEFAULT_GUARD.maxShare,
    minTeammates: typeof g.min_teammates === 'number' ? g.min_teammates : DEFAULT_GUARD.minTeammates,
  };
}

function decideMode(
  integration: IntegrationRow,
  source: DirectorySource,
  run: SyncRunRow,
): { mode: 'full' | 'delta'; since?: IncrementalState; reason?: string } {
  if (run.pages > 0) return run.mode === 'delta' && integration.sync_cursor ? { mode: 'delta', since: integration.sync_cursor } : { mode: 'full' };
  if (!source.incremental) return { mode: 'full' };
  if (run.checkpoint?.full) return { mode: 'full', reason: 'full listing requested' };
  if (!integration.sync_cursor) return { mode: 'full' };
  if (!integration.last_full_sync_at || Date.now() - integration.last_full_sync_at.getTime() > FULL_SYNC_EVERY_MS) {
    return { mode: 'full', reason: 'weekly full listing' };
  }
  return { mode: 'delta', since: integration.sync_cursor };
}

export async function executeRun(ctx: AppContext, runId: string, opts: ExecuteOptions = {}): Promise<SyncRunRow | undefined> {
  // This execution claims the run; an older one still alive stops at its next page.
  const run = await claimRun(ctx.pool, runId);
  if (!run) return getRun(ctx.pool, runId);
  const executor = run.executor!;
  const logger = (opts.logger ?? ctx.logger).child({ runId, integrationId: run.integration_id });
  const integration = await getIntegration(ctx.pool, run.workspace_id, run.integration_id);
  if (!integration || integration.status !== 'active' || !integration.activated) {
    await finishRun(ctx.pool, runId, 'cancelled', { error: `integration is ${integration?.status ?? 'gone'}` }, executor);
    return getRun(ctx.pool, runId);
  }

  try {
    const source = buildConnector<DirectorySource>(ctx, integration, logger, { signal: opts.signal });
    // The run as its completion ended it (read back only when it did not).
    const ended = await listAndWrite(ctx, integration, source, run, opts, logger);
    if (ended) return ended;
  } catch (err) {
    await handleFailure(ctx, integration, run, err, opts, logger);
  }
  return getRun(ctx.pool, runId);
}

/** The directory's known size: its sources, or the users the last complete run saw. */
async function knownUsers(ctx: AppContext, integrationId: string): Promise<number> {
  const [sources, seen] = await Promise.all([countSources(ctx.pool, integrationId), lastCompleteRunSeen(ctx.pool, integrationId)]);
  return Math.max(sources, seen);
}

async function listAndWrite(
  ctx: AppContext,
  integration: IntegrationRow,
  source: DirectorySource,
  run: SyncRunRow,
  opts: ExecuteOptions,
  logger: Logger,
): Promise<SyncRunRow | undefined> {
  const policy = opts.retry ?? DEFAULT_RETRY;
  const observer = {
    onRateLimited: async (waitMs: number) => {
      logger.info({ waitMs }, 'provider rate limit; waiting');
      await countRateLimitWait(ctx.pool, run.id);
    },
    onTransient: (waitMs: number, err: ConnectorError) => logger.warn({ waitMs, err: err.message }, 'provider error; retrying'),
  };

  const decided = decideMode(integration, source, run);
  let { mode, since } = decided;
  if (run.pages === 0) await setRunMode(ctx.pool, run.id, mode, decided.reason ?? null);

  const fields: MappedField[] = await mappedFields(ctx.pool, integration.workspace_id, integration.id);
  const category = integration.category === 'smart_fields' ? 'smart_fields' : 'teammates';
  let pageToken = run.pages > 0 ? (run.checkpoint?.pageToken ?? undefined) : undefined;
  // Pages asked for and still in flight when the listing stops (it failed, or ended), or when the
  // worker stops, are not retried.
  const listing = new AbortController();
  const stopped = opts.signal ? AbortSignal.any([listing.signal, opts.signal]) : listing.signal;
  let nextState: IncrementalState | undefined;
  let groupIds = new Map<string, string>();
  try {
    // The first users page is asked for beside the groups listing, which it does not depend on:
    // the run starts writing one provider round trip sooner.
    const firstPage = { pageToken, since, attributes: fields.map((f) => f.attribute) };
    let first: Promise<DirectoryPage> | undefined = withRetry(() => source.fetchUsersPage(firstPage), policy, observer, stopped);
    first.catch(() => {}); // awaited by listPages
    const known = knownUsers(ctx, integration.id);
    known.catch(() => {}); // awaited below
    if (category === 'teammates')
      groupIds = await syncGroups(ctx.pool, integration, (await withRetry(() => source.listGroups(), policy, observer, opts.signal)).map(cleanDirectoryGroup));
    const bound = (opts.listingBound ?? defaultListingBound)(await known);

    let current = run;
    for (;;) {
      try {
        nextState = await listPages(
          ctx,
          source,
          { ...current, mode },
          { executor: run.executor!, pageToken, first, signal: stopped, since, fields, category, groupIds, policy, observer, bound },
        );
        break;
      } catch (err) {
        if (!(err instanceof CursorExpiredError) || mode === 'full') throw err;
        // The incremental token is no longer accepted: start over with a full listing, and say so.
        logger.warn({ reason: err.message }, 'incremental token expired; falling back to a full listing');
        mode = 'full';
        since = undefined;
        pageToken = undefined;
        first = undefined;
        await withTx(ctx.pool, async (client) => {
          await holdRun(client, run.id, run.executor!);
          await restartAsFull(client, run.id, `incremental token rejected: ${err.message}`);
        });
        current = (await getRun(ctx.pool, run.id)) ?? current;
      }
    }
  } finally {
    listing.abort();
  }
  if (category === 'teammates') await writeGroupsAfterListing(ctx, source, run, { executor: run.executor!, groupIds, policy, observer, signal: opts.signal });
  return complete(ctx, integration, run, mode, nextState, logger);
}

/** After a complete listing: removals (behind the deletion guard), the cursor, the final status; answers the ended run. */
async function complete(
  ctx: AppContext,
  integration: IntegrationRow,
  run: SyncRunRow,
  mode: 'full' | 'delta',
  nextState: IncrementalState | undefined,
  logger: Logger,
): Promise<SyncRunRow | undefined> {
  const ended = await withTx(ctx.pool, async (client) => {
    await holdRun(client, run.id, run.executor!);
    let deleted = 0;
    if (integration.category === 'teammates') {
      const { unlisted, total } = await unlistedSources(client, integration.id, run.id, mode);
      const n = unlisted.length;
      if (n > 0) {
        const guard = guardFrom(integration.config);
        const fresh = await getRun(client, run.id);
        if (!fresh?.confirm_deletions && total > guard.minTeammates && n > guard.maxShare * total) {
          logger.warn({ wouldRemove: n, total, maxShare: guard.maxShare }, 'deletion guard: removing nobody until confirmed');
          const error = `this run would remove ${n} of ${total} teammates (more than ${Math.round(guard.maxShare * 100)}%); confirm with: sigsync sync --integration ${integration.id} --confirm-deletions`;
          return finishRun(client, run.id, 'needs_confirmation', { pending_deletions: n, error });
        }
        // The owner writes teammate.deleted for each teammate it removes.
        const removed = await removeSources(client, integration.workspace_id, integration.id, unlisted);
        deleted = removed.length;
        if (deleted) await requestTeammateInstalls(client, integration.workspace_id, removed);
      }
    }
    await saveSyncCursor(client, integration.id, nextState, mode === 'full');
    if (integration.category === 'teammates') {
      await requestPhotoSync(client, integration.workspace_id, await integrationIdsOfKind(client, integration.workspace_id, integration.kind, 'assets', {}));
      if (await hasBillingAccount(client, integration.workspace_id)) await requestSeatSync(client, integration.workspace_id, run.id);
    }
    return finishRun(client, run.id, 'succeeded', { deleted });
  });
  logger.info('sync run complete');
  return ended;
}

async function handleFailure(ctx: AppContext, integration: IntegrationRow, run: SyncRunRow, err: unknown, opts: ExecuteOptions, logger: Logger): Promise<void> {
  const executor = run.executor!;
  if (err instanceof RunTakenOverError) {
    // Another execution of this run holds it now and carries it on; this one wrote nothing since.
    logger.info('sync run taken over by another execution; stopping this one');
    return;
  }
  if (opts.signal?.aborted) {
    // Whatever failed was cancelled by this worker's stop, not refused by the provider.
    const message = `the worker stopped while this run was waiting on the provider${err instanceof Error ? ` (${err.message})` : ''}`;
    if (!opts.lastAttempt) {
      logger.info({ err: message }, 'sync run interrupted by the worker stopping; its job runs again and resumes from the last written page');
      throw new RunInterruptedError(message, { cause: err });
    }
    await finishRun(ctx.pool, run.id, 'failed', { error_code: 'transient', error: message }, executor);
    return;
  }
  if (err instanceof AccessLostError) {
    await withTx(ctx.pool, async (client) => {
      await markAccessLost(ctx, client, integration, err.message);
      await finishRun(client, run.id, 'failed', { error_code: 'access_lost', error: err.message }, executor);
    });
    return;
  }
  if (err instanceof ConnectorError && (err.code === 'rate_limited' || err.code === 'transient') && !opts.lastAttempt) {
    // The job runner retries later; the run resumes from its checkpoint.
    logger.warn({ err: err.message }, 'sync interrupted by provider errors; the job will retry');
    throw err;
  }
  const code = err instanceof ConnectorError ? err.code : err instanceof IntegrationSetupError ? 'invalid_config' : 'internal_error';
  const message = err instanceof Error ? err.message : String(err);
  if (!(err instanceof ConnectorError)) logger.error({ err }, 'sync run failed');
  else logger.warn({ code, err: message }, 'sync run failed');
  await finishRun(ctx.pool, run.id, 'failed', { error_code: code, error: message }, executor);
}
