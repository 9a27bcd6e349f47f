/**
 * The directory sync engine: executes one sync run.
 *
 *   listGroups -> upsert groups and org units
 *   fetch page 1 ─┬─ write page 1 (one transaction: upsert + seen + counters + checkpoint)
 *                 └─ fetch page 2 (prefetched while page 1 is written) ...
 *   complete listing -> removals (deletion guard) -> save the incremental cursor -> succeeded
 *
 * Directory text is cleaned first, for every connector (src/sync/clean.ts: no NUL, no lone
 * surrogates; addresses the database cannot hold are reported and left out).
 *
 * Deletions happen only after a complete listing: a run that fails or is cut off part-way deletes
 * nothing. A crashed run resumes from its checkpoint (the page token after the last written page);
 * the seen set is in Postgres, so resuming adds no duplicates.
 */
import type { Logger } from 'pino';
import { AccessLostError, ConnectorError, CursorExpiredError, type DirectoryGroup, type DirectoryPage, type DirectorySource, type IncrementalState } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { buildConnector, getIntegration, IntegrationSetupError, markAccessLost, type IntegrationRow } from '../integrations/repository.ts';
import { teammatePayloadSql } from '../events/outbox.ts';
import { DEFAULT_RETRY, withRetry, type RetryPolicy } from './retry.ts';
import { getRun, type SyncRunRow } from './runs.ts';
import { SyncStatistics } from './stats.ts';
import { writePage, type MappedField, type PageResult } from './write.ts';
import { onTeammatesChanged } from './hooks.ts';
import { recordDirectoryPhotos, requestPhotoSync } from '../assets/directoryPhotos.ts';
import { requestSeatSync } from '../db/billing.ts';
import { cleanDirectoryGroup, cleanPageUsers, cleanText } from './clean.ts';

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
}

const MAX_ERROR_DETAILS = 100;

function guardFrom(config: Record<string, unknown>): DeletionGuard {
  const g = (config.deletion_guard ?? {}) as Partial<{ max_share: number; min_teammates: number }>;
  return {
    maxShare: typeof g.max_share === 'number' ? g.max_share : DEFAULT_GUARD.maxShare,
    minTeammates: typeof g.min_teammates === 'number' ? g.min_teammates : DEFAULT_GUARD.minTeammates,
  };
}

async function finishRun(ctx: AppContext, runId: string, status: SyncRunRow['status'], fields: Partial<Pick<SyncRunRow, 'error_code' | 'error' | 'deleted' | 'pending_deletions'>> = {}) {
  await ctx.pool.query(
    `update sync_runs set status = $2, finished_at = now(), error_code = $3, error = $4,
            deleted = coalesce($5, deleted), pending_deletions = coalesce($6, pending_deletions)
      where id = $1 and status = 'running'`,
    [runId, status, fields.error_code ?? null, fields.error ?? null, fields.deleted ?? null, fields.pending_deletions ?? null],
  );
}

async function syncGroups(ctx: AppContext, integration: IntegrationRow, groups: DirectoryGroup[]): Promise<Map<string, string>> {
  return withTx(ctx.pool, async (client) => {
    await client.query(
      `insert into groups (workspace_id, integration_id, kind, external_id, name, email, path)
       select $1, $2, * from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
       on conflict (integration_id, kind, external_id) do update
          set name = excluded.name, email = excluded.email, path = excluded.path
        where (groups.name, groups.email, groups.path) is distinct from (excluded.name, excluded.email, excluded.path)
`,
      [
        integration.workspace_id,
        integration.id,
        groups.map((g) => g.kind),
        groups.map((g) => g.externalId),
        groups.map((g) => g.name),
        groups.map((g) => g.email ?? null),
        groups.map((g) => g.path ?? null),
      ],
    );
    // Groups the directory no longer has go, with their memberships and assignments.
    await client.query(
      `delete from groups g where g.integration_id = $1
          and not exists (select 1 from unnest($2::text[], $3::text[]) x(kind, ext) where x.kind = g.kind and x.ext = g.external_id)`,
      [integration.id, groups.map((g) => g.kind), groups.map((g) => g.externalId)],
    );
    const all = await client.query<{ id: string; external_id: string }>('select id, external_id from groups where integration_id = $1', [integration.id]);
    return new Map(all.rows.map((r) => [r.external_id, r.id]));
  });
}

function decideMode(integration: IntegrationRow, source: DirectorySource, run: SyncRunRow): { mode: 'full' | 'delta'; since?: IncrementalState; reason?: string } {
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
  const run = await getRun(ctx.pool, runId);
  if (!run || run.status !== 'running') return run;
  const logger = (opts.logger ?? ctx.logger).child({ runId, integrationId: run.integration_id });
  const integration = await getIntegration(ctx.pool, run.workspace_id, run.integration_id);
  if (!integration || integration.status !== 'active' || !integration.activated) {
    await finishRun(ctx, runId, 'cancelled', { error: `integration is ${integration?.status ?? 'gone'}` });
    return getRun(ctx.pool, runId);
  }

  try {
    const source = buildConnector<DirectorySource>(ctx, integration, logger);
    await listAndWrite(ctx, integration, source, run, opts, logger);
  } catch (err) {
    await handleFailure(ctx, integration, runId, err, opts, logger);
  }
  return getRun(ctx.pool, runId);
}

async function listAndWrite(ctx: AppContext, integration: IntegrationRow, source: DirectorySource, run: SyncRunRow, opts: ExecuteOptions, logger: Logger): Promise<void> {
  const policy = opts.retry ?? DEFAULT_RETRY;
  const observer = {
    onRateLimited: async (waitMs: number) => {
      logger.info({ waitMs }, 'provider rate limit; waiting');
      await ctx.pool.query('update sync_runs set rate_limit_waits = rate_limit_waits + 1 where id = $1', [run.id]);
    },
    onTransient: (waitMs: number, err: ConnectorError) => logger.warn({ waitMs, err: err.message }, 'provider error; retrying'),
  };

  const decided = decideMode(integration, source, run);
  let { mode, since } = decided;
  if (run.pages === 0) {
    await ctx.pool.query('update sync_runs set mode = $2, fallback_reason = coalesce(fallback_reason, $3) where id = $1', [run.id, mode, decided.reason ?? null]);
  }

  const fields = (
    await ctx.pool.query<MappedField>(
      `select id, integration_attribute as attribute, kind from smart_fields where workspace_id = $1 and integration_id = $2 and integration_attribute is not null`,
      [integration.workspace_id, integration.id],
    )
  ).rows;
  const category = integration.category === 'smart_fields' ? 'smart_fields' : 'teammates';
  const groupIds =
    category === 'teammates' ? await syncGroups(ctx, integration, (await withRetry(() => source.listGroups(), policy, observer)).map(cleanDirectoryGroup)) : new Map<string, string>();

  let pageToken = run.pages > 0 ? (run.checkpoint?.pageToken ?? undefined) : undefined;
  let nextState: IncrementalState | undefined;
  for (;;) {
    try {
      nextState = await pages(ctx, source, { ...run, mode }, { pageToken, since, fields, category, groupIds, policy, observer, integration });
      break;
    } catch (err) {
      if (!(err instanceof CursorExpiredError) || mode === 'full') throw err;
      // The incremental token is no longer accepted: start over with a full listing, and say so.
      logger.warn({ reason: err.message }, 'incremental token expired; falling back to a full listing');
      mode = 'full';
      since = undefined;
      pageToken = undefined;
      await ctx.pool.query(
        `update sync_runs set mode = 'full', fallback_reason = $2, checkpoint = null where id = $1`,
        [run.id, `incremental token rejected: ${err.message}`],
      );
      await ctx.pool.query('delete from sync_run_seen where run_id = $1', [run.id]);
    }
  }
  await complete(ctx, integration, run, mode, nextState, logger);
}

interface PageLoop {
  pageToken: string | undefined;
  since: IncrementalState | undefined;
  fields: MappedField[];
  category: 'teammates' | 'smart_fields';
  groupIds: Map<string, string>;
  policy: RetryPolicy;
  observer: Parameters<typeof withRetry>[2];
  integration: IntegrationRow;
}

/** Fetches page N+1 while page N is written. Returns the incremental state of the last page. */
async function pages(ctx: AppContext, source: DirectorySource, run: SyncRunRow, loop: PageLoop): Promise<IncrementalState | undefined> {
  const attributes = loop.fields.map((f) => f.attribute);
  const fetch = (pageToken: string | undefined): Promise<DirectoryPage> => {
    const p = withRetry(() => source.fetchUsersPage({ pageToken, since: loop.since, attributes }), loop.policy, loop.observer);
    p.catch(() => {}); // awaited below; this only keeps a prefetch failure from being "unhandled" meanwhile
    return p;
  };
  const statistics = new SyncStatistics();
  let pending = fetch(loop.pageToken);
  for (;;) {
    const page = await pending;
    if (page.nextPageToken) pending = fetch(page.nextPageToken);
    // Text Postgres cannot store (NUL, lone surrogates, impossible addresses) is cleaned here, once
    // for every connector, before the fingerprints are computed, so an unchanged directory still
    // compares equal.
    const { users, errors: refused } = cleanPageUsers(page.users);
    const created = await withTx(ctx.pool, async (client) => {
      // A page whose commit is lost in a database crash loses its checkpoint with it and is written
      // again on resume (the writes are idempotent upserts), so the page need not wait for fsync.
      await client.query('set local synchronous_commit = off');
      const r: PageResult = await writePage(
        client,
        { workspaceId: run.workspace_id, integrationId: run.integration_id, runId: run.id, category: loop.category, fields: loop.fields, groupIds: loop.groupIds },
        users,
        page.removedIds.map(cleanText),
      );
      await client.query(
        `update sync_runs set pages = pages + 1, seen = seen + $2, created = created + $3, updated = updated + $4,
                unchanged = unchanged + $5, skipped = skipped + $6, errors = errors + $7,
                error_details = case when jsonb_array_length(error_details) >= ${MAX_ERROR_DETAILS} then error_details
                                     else error_details || $8::jsonb end,
                checkpoint = jsonb_build_object('pageToken', $9::text)
          where id = $1`,
        [run.id, r.seen, r.created, r.updated, r.unchanged, r.skipped + page.skipped.length, refused.length + r.errors.length, JSON.stringify([...refused, ...r.errors].slice(0, MAX_ERROR_DETAILS)), page.nextPageToken],
      );
      if (r.changedTeammateIds.length) await onTeammatesChanged(client, run.workspace_id, r.changedTeammateIds);
      // An unchanged user's photo reference is unchanged too (it is part of the fingerprint).
      if (loop.category === 'teammates') {
        const unchanged = new Set(r.unchangedExternalIds);
        await recordDirectoryPhotos(client, run.workspace_id, run.integration_id, unchanged.size ? users.filter((u) => !unchanged.has(u.externalId)) : users);
      }
      return r.created;
    });
    await statistics.afterPage(ctx.pool, created);
    if (!page.nextPageToken) return page.nextState;
  }
}

/** After a complete listing: removals (behind the deletion guard), the cursor, the final status. */
async function complete(ctx: AppContext, integration: IntegrationRow, run: SyncRunRow, mode: 'full' | 'delta', nextState: IncrementalState | undefined, logger: Logger): Promise<void> {
  await withTx(ctx.pool, async (client) => {
    let deleted = 0;
    if (integration.category === 'teammates') {
      const candidates = await client.query<{ teammate_id: string; external_id: string }>(
        mode === 'full'
          ? `select ts.teammate_id, ts.external_id from teammate_sources ts
              where ts.integration_id = $1
                and not exists (select 1 from sync_run_seen s where s.run_id = $2 and s.external_id = ts.external_id and not s.removed)`
          : `select ts.teammate_id, ts.external_id from teammate_sources ts
               join sync_run_seen s on s.run_id = $2 and s.external_id = ts.external_id and s.removed
              where ts.integration_id = $1`,
        [integration.id, run.id],
      );
      const n = candidates.rowCount ?? 0;
      if (n > 0) {
        const total = (await client.query<{ n: number }>('select count(*)::int as n from teammate_sources where integration_id = $1', [integration.id])).rows[0]!.n;
        const guard = guardFrom(integration.config);
        const fresh = await getRun(client, run.id);
        if (!fresh?.confirm_deletions && total > guard.minTeammates && n > guard.maxShare * total) {
          logger.warn({ wouldRemove: n, total, maxShare: guard.maxShare }, 'deletion guard: removing nobody until confirmed');
          await client.query(
            `update sync_runs set status = 'needs_confirmation', finished_at = now(), pending_deletions = $2, checkpoint = null,
                    error = $3 where id = $1 and status = 'running'`,
            [run.id, n, `this run would remove ${n} of ${total} teammates (more than ${Math.round(guard.maxShare * 100)}%); confirm with: sigsync sync --integration ${integration.id} --confirm-deletions`],
          );
          return;
        }
        await client.query('delete from teammate_sources where integration_id = $1 and external_id = any($2::text[])', [
          integration.id,
          candidates.rows.map((r) => r.external_id),
        ]);
        // A teammate goes when no directory integration lists them any more.
        const removed = await client.query<{ id: string }>(
          `with gone as (
             update teammates t set deleted_at = now()
              where t.workspace_id = $1 and t.id = any($2::uuid[]) and t.deleted_at is null
                and not exists (select 1 from teammate_sources ts where ts.teammate_id = t.id)
             returning t.*)
           insert into events (workspace_id, type, payload)
           select $1, 'teammate.deleted', ${teammatePayloadSql('teammate.deleted', 'gone')} from gone
           returning (payload->'teammate'->>'uuid') as id`,
          [integration.workspace_id, candidates.rows.map((r) => r.teammate_id)],
        );
        deleted = removed.rowCount ?? 0;
        if (deleted) await onTeammatesChanged(client, integration.workspace_id, removed.rows.map((r) => r.id));
      }
    }
    await client.query(
      `update integrations set sync_cursor = coalesce($2::jsonb, sync_cursor), sync_cursor_at = case when $2::jsonb is null then sync_cursor_at else now() end,
              last_full_sync_at = case when $3 then now() else last_full_sync_at end
        where id = $1`,
      [integration.id, nextState ? JSON.stringify(nextState) : null, mode === 'full'],
    );
    if (integration.category === 'teammates') {
      await requestPhotoSync(client, integration.workspace_id, integration.kind);
      await requestSeatSync(client, integration.workspace_id, run.id);
    }
    await client.query(
      `update sync_runs set status = 'succeeded', finished_at = now(), deleted = $2, checkpoint = null where id = $1 and status = 'running'`,
      [run.id, deleted],
    );
  });
  logger.info('sync run complete');
}

async function handleFailure(ctx: AppContext, integration: IntegrationRow, runId: string, err: unknown, opts: ExecuteOptions, logger: Logger): Promise<void> {
  if (err instanceof AccessLostError) {
    await withTx(ctx.pool, async (client) => {
      await markAccessLost(ctx, client, integration, err.message);
      await client.query(
        `update sync_runs set status = 'failed', finished_at = now(), error_code = 'access_lost', error = $2 where id = $1 and status = 'running'`,
        [runId, err.message],
      );
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
  await finishRun(ctx, runId, 'failed', { error_code: code, error: message });
}
