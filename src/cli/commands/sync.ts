/**
 * `sigsync sync` starts directory sync runs; with --follow it shows progress per run (src/cli/progress.ts: a bar on a terminal, lines on a pipe; and runs
 * a worker in-process for them, so they finish even when no server is running) and prints the
 * final counters. `sigsync runs` lists recent runs.
 */
import type { Command } from 'commander';
import type { AppContext } from '../../context.ts';
import type { StartedRun, SyncRunRow } from '../../integrations/syncRuns.ts';
import { UsageError } from '../errors.ts';
import { out, table } from '../../output.ts';
import { requireUuid, withContext } from './admin.ts';

const counters = (r: SyncRunRow) =>
  `pages ${r.pages} · seen ${r.seen} · created ${r.created} · updated ${r.updated} · unchanged ${r.unchanged} · deleted ${r.deleted} · skipped ${r.skipped} · errors ${r.errors}`;

async function follow(ctx: AppContext, started: StartedRun[]): Promise<SyncRunRow[]> {
  const [{ startWorker }, { getRun }, { runProgress }, { jobs }] = await Promise.all([
    import('../../worker/runner.ts'),
    import('../../integrations/syncRuns.ts'),
    import('../progress.ts'),
    import('../../jobs/catalogue.ts'),
  ]);
  const runner = await startWorker(ctx, { only: [jobs.syncIntegration.name], noCron: true, pollInterval: 200 });
  let progress: Awaited<ReturnType<typeof runProgress>> | undefined;
  try {
    const estimates = await ctx.pool.query<{ integration_id: string; seen: number }>(
      `select distinct on (integration_id) integration_id, seen from sync_runs
        where integration_id = any($1::uuid[]) and status = 'succeeded' order by integration_id, finished_at desc`,
      [started.map((r) => r.integration_id)],
    );
    const estimate = new Map(estimates.rows.map((r) => [r.integration_id, r.seen]));
    progress = await runProgress(started.map((r) => ({ id: r.id, name: r.integration_name, estimate: estimate.get(r.integration_id) ?? 0 })));
    const done = new Map<string, SyncRunRow>();
    while (done.size < started.length) {
      for (const s of started) {
        if (done.has(s.id)) continue;
        const r = await getRun(ctx.pool, s.id);
        if (!r) continue;
        progress.update(r);
        if (r.status !== 'running') done.set(r.id, r);
      }
      if (done.size < started.length) await new Promise((res) => setTimeout(res, 250));
    }
    return [...done.values()];
  } finally {
    progress?.stop();
    await runner.stop();
  }
}

/** The final counters of followed runs; a run that failed or waits for confirmation makes the exit code 1. */
function reportFinished(finished: Awaited<ReturnType<typeof follow>>): void {
  for (const r of finished) {
    out(`${r.id} ${r.status}${r.mode === 'delta' ? ' (incremental)' : ''}: ${counters(r)}`);
    if (r.fallback_reason) out(`  full listing because: ${r.fallback_reason}`);
    if (r.error) out(`  ${r.error_code ?? 'error'}: ${r.error}`);
    for (const d of r.error_details.slice(0, 10)) out(`  - ${d.message}`);
    if (r.status === 'failed' || r.status === 'needs_confirmation') process.exitCode = 1;
  }
}

export function syncCommands(program: Command): void {
  program
    .command('sync')
    .description('Start a directory sync for one integration or every directory integration of a workspace.')
    .option('--integration <id>', 'the integration to sync')
    .option('--workspace <id>', 'sync every directory integration of this workspace')
    .option('--follow', 'show progress until the runs finish, then print their counters')
    .option('--confirm-deletions', 'apply removals that the deletion guard held back')
    .option('--full', 'force a full listing where an incremental one is possible')
    .action(async (opts: { integration?: string; workspace?: string; follow?: boolean; confirmDeletions?: boolean; full?: boolean }) => {
      if (!!opts.integration === !!opts.workspace) throw new UsageError('give exactly one of --integration ID or --workspace ID');
      const [{ startRuns }, { requestPhotoSync }] = await Promise.all([import('../../integrations/syncRuns.ts'), import('../../assets/directoryPhotos.ts')]);
      await withContext(async (ctx) => {
        let workspaceId: string;
        let ids: string[] | 'all';
        if (opts.integration) {
          const id = requireUuid(opts.integration, '--integration');
          const { rows } = await ctx.pool.query<{ workspace_id: string; status: string; category: string; kind: string }>('select workspace_id, status, category, kind from integrations where id = $1', [id]);
          const row = rows[0];
          if (!row) throw new UsageError(`--integration: no integration ${id}`);
          if (row.category === 'assets' && row.status === 'active') {
            const queued = await requestPhotoSync(ctx.pool, row.workspace_id, row.kind, id);
            out(queued ? `photo sync queued for ${id}; a running worker (npm start, or sigsync worker) carries it out` : `nothing to start: ${id} is not activated`);
            return;
          }
          if (row.category !== 'teammates' && row.category !== 'smart_fields') throw new UsageError(`--integration: ${id} is a ${row.category} integration; only teammates and smart_fields integrations sync`);
          if (row.status !== 'active') throw new UsageError(`--integration: ${id} is ${row.status}; reconnect it first (sigsync integration reconnect ${id} --credentials-file ...)`);
          workspaceId = row.workspace_id;
          ids = [id];
        } else {
          workspaceId = requireUuid(opts.workspace!, '--workspace');
          ids = 'all';
        }
        const started = await startRuns(ctx.pool, workspaceId, ids, {
          trigger: opts.confirmDeletions ? 'confirm' : 'cli',
          confirmDeletions: opts.confirmDeletions ?? false,
          full: opts.full ?? false,
        });
        if (!started.length) {
          out('nothing to start: the integrations are already syncing, have lost access, or none is connected');
          return;
        }
        for (const r of started) out(`sync run ${r.id} started for ${r.integration_name} (${r.category})`);
        if (!opts.follow) {
          out('a running worker (npm start, or sigsync worker) carries it out; follow it with: sigsync runs');
          return;
        }
        reportFinished(await follow(ctx, started));
      });
    });

  program
    .command('runs')
    .description('List recent sync runs, newest first.')
    .option('--workspace <id>', 'only this workspace')
    .option('--integration <id>', 'only this integration')
    .option('--limit <n>', 'how many', '20')
    .action(listRuns);
}

/** `sigsync runs`: recent runs with their counters and slowest stages. */
async function listRuns(opts: { workspace?: string; integration?: string; limit: string }): Promise<void> {
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit: an integer from 1 to 1000');
  const ws = opts.workspace ? requireUuid(opts.workspace, '--workspace') : null;
  const integ = opts.integration ? requireUuid(opts.integration, '--integration') : null;
  await withContext(async (ctx) => {
    const { rows } = await ctx.pool.query(
      `select r.id, i.name as integration, r.status, r.mode, r.trigger, r.pages, r.seen, r.created, r.updated, r.deleted,
              r.errors, r.started_at, r.finished_at, coalesce(r.error_code, '') as error, r.stage_ms
         from sync_runs r join integrations i on i.id = r.integration_id
        where ($1::uuid is null or r.workspace_id = $1) and ($2::uuid is null or r.integration_id = $2)
        order by r.started_at desc limit $3`,
      [ws, integ, limit],
    );
    const { slowestStages } = await import('../../sync/timing.ts');
    const withStages = rows.map((r: Record<string, unknown>) => ({ ...r, slowest_stages: slowestStages(r.stage_ms as Record<string, number>) }));
    table(withStages, ['id', 'integration', 'status', 'mode', 'trigger', 'pages', 'seen', 'created', 'updated', 'deleted', 'errors', 'started_at', 'finished_at', 'error', 'slowest_stages']);
  });
}
