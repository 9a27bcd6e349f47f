/**
 * `sigsync sync` starts directory sync runs; with --follow it shows progress per run (src/cli/progress.ts: a bar on a terminal, lines on a pipe; and runs
 * a worker in-process for them, so they finish even when no server is running) and prints the
 * final counters, or, for a run that stops moving (a provider that does not answer), what it waits
 * on. `sigsync runs` lists recent runs.
 */
import type { Command } from 'commander';
import type { AppContext } from '../../context.ts';
import type { RunJobState, StartedRun, SyncRunRow } from '../../integrations/syncRuns.ts';
import { UsageError } from '../errors.ts';
import { out, table } from '../../output.ts';
import { requireUuid, withContext } from './admin.ts';

const counters = (r: SyncRunRow) =>
  `pages ${r.pages} · seen ${r.seen} · created ${r.created} · updated ${r.updated} · unchanged ${r.unchanged} · deleted ${r.deleted} · skipped ${r.skipped} · errors ${r.errors}`;

/** How long --follow waits on a run that does not move before it stops following it (default). */
export const STALL_TIMEOUT_S = 120;

/**
 * What --follow counts as a run moving: its status, its counters, a rate-limit wait, or a new
 * execution (its job taken up again after a failure).
 */
const movement = (r: SyncRunRow) => `${r.status} ${r.executor ?? ''} ${r.rate_limit_waits} ${counters(r)}`;

interface Followed {
  /** The latest state of every followed run. */
  runs: SyncRunRow[];
  /** Runs that did not move for the stall timeout, with their job's state once the worker stopped. */
  stalled: Map<string, RunJobState | undefined>;
}

/**
 * Follows the runs, with a worker in-process for their jobs, until each has ended or has not moved
 * for `stallMs`. The worker is then stopped, which aborts a job still waiting on a provider that
 * does not answer (its requests carry the job's signal): such a run stays `running` at its
 * checkpoint, and its job runs again later.
 */
async function follow(ctx: AppContext, started: StartedRun[], stallMs: number): Promise<Followed> {
  const [{ startWorker }, { getRun, runJobState }, { lastSucceededSeen }, { runProgress }, { jobs }] = await Promise.all([
    import('../../worker/runner.ts'),
    import('../../integrations/syncRuns.ts'),
    import('../../integrations/queries.ts'),
    import('../progress.ts'),
    import('../../jobs/catalogue.ts'),
  ]);
  // On a stop, the jobs of runs that stalled are aborted at once: nothing else runs here.
  const runner = await startWorker(ctx, { only: [jobs.syncIntegration.name], noCron: true, pollInterval: 200, abortJobsAfterMs: 0 });
  let progress: Awaited<ReturnType<typeof runProgress>> | undefined;
  const latest = new Map<string, SyncRunRow>();
  const stalledIds = new Set<string>();
  try {
    const estimate = await lastSucceededSeen(
      ctx.pool,
      started.map((r) => r.integration_id),
    );
    progress = await runProgress(started.map((r) => ({ id: r.id, name: r.integration_name, estimate: estimate.get(r.integration_id) ?? 0 })));
    const moved = new Map<string, { state: string; at: number }>();
    const following = () => started.filter((s) => !stalledIds.has(s.id) && (latest.get(s.id)?.status ?? 'running') === 'running');
    while (following().length) {
      for (const s of following()) {
        const r = await getRun(ctx.pool, s.id);
        if (!r) continue;
        latest.set(r.id, r);
        progress.update(r);
        const state = movement(r);
        if (moved.get(r.id)?.state !== state) moved.set(r.id, { state, at: Date.now() });
        else if (r.status === 'running' && Date.now() - moved.get(r.id)!.at >= stallMs) stalledIds.add(r.id);
      }
      if (following().length) await new Promise((res) => setTimeout(res, 250));
    }
  } finally {
    progress?.stop();
    await runner.stop();
  }
  // The stop may have ended a stalled run (its job's last attempt): read them again.
  const stalled = new Map<string, RunJobState | undefined>();
  for (const id of stalledIds) {
    const r = await getRun(ctx.pool, id);
    if (r) latest.set(id, r);
    if (r?.status === 'running') stalled.set(id, await runJobState(ctx.pool, r.integration_id));
  }
  return { runs: started.map((s) => latest.get(s.id)).filter((r): r is SyncRunRow => r !== undefined), stalled };
}

/** Where a stalled run's job stands (what the run waits for), as the queue tells it. */
function jobState(job: RunJobState | undefined): string {
  if (!job) return 'none is queued to carry it on';
  if (job.locked_by) return `worker ${job.locked_by} has been running it since ${job.locked_at?.toISOString()} (that worker's log says what it waits on)`;
  if (job.attempts >= job.max_attempts) return `it has used its ${job.max_attempts} attempts${job.last_error ? `; the last one ended: ${job.last_error}` : ''}`;
  const next = `from ${job.run_at.toISOString()} (attempt ${job.attempts + 1} of ${job.max_attempts})`;
  return job.last_error ? `stopped: ${job.last_error}; it runs again ${next}` : `it waits for a worker to take it, ${next}`;
}

/** The final counters of followed runs; a run that failed, waits for confirmation or stalled makes the exit code 1. */
function reportFinished({ runs, stalled }: Followed, stallS: number): void {
  for (const r of runs) {
    if (stalled.has(r.id)) {
      out(`${r.id} made no progress for ${stallS} s, so this stopped following it: ${counters(r)}`);
      out(`  its job: ${jobState(stalled.get(r.id))}`);
      out(
        `  it is still running and resumes from its last written page when a worker runs its job: npm start, sigsync worker, or sigsync sync --integration ${r.integration_id} --follow`,
      );
      out(`  look further: sigsync runs --integration ${r.integration_id}`);
      process.exitCode = 1;
      continue;
    }
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
    .option(
      '--stall-timeout <seconds>',
      'with --follow: stop following a run that has not moved for this long, and say what it waits on',
      String(STALL_TIMEOUT_S),
    )
    .action(async (opts: { integration?: string; workspace?: string; follow?: boolean; confirmDeletions?: boolean; full?: boolean; stallTimeout: string }) => {
      if (!!opts.integration === !!opts.workspace) throw new UsageError('give exactly one of --integration ID or --workspace ID');
      const stallS = Number(opts.stallTimeout);
      if (!Number.isFinite(stallS) || stallS <= 0 || stallS > 86_400)
        throw new UsageError(`--stall-timeout: a number of seconds from 1 to 86400; got "${opts.stallTimeout}"`);
      const [{ startRuns, runningRuns }, { integrationById, integrationIdsOfKind }, { requestPhotoSync }] = await Promise.all([
        import('../../integrations/syncRuns.ts'),
        import('../../integrations/queries.ts'),
        import('../../jobs/triggers.ts'),
      ]);
      await withContext(async (ctx) => {
        let workspaceId: string;
        let ids: string[] | 'all';
        if (opts.integration) {
          const id = requireUuid(opts.integration, '--integration');
          const row = await integrationById(ctx.pool, id);
          if (!row) throw new UsageError(`--integration: no integration ${id}`);
          if (row.category === 'assets' && row.status === 'active') {
            const queued = await requestPhotoSync(
              ctx.pool,
              row.workspace_id,
              await integrationIdsOfKind(ctx.pool, row.workspace_id, row.kind, 'assets', { id }),
            );
            out(
              queued
                ? `photo sync queued for ${id}; a running worker (npm start, or sigsync worker) carries it out`
                : `nothing to start: ${id} is not activated`,
            );
            return;
          }
          if (row.category !== 'teammates' && row.category !== 'smart_fields')
            throw new UsageError(`--integration: ${id} is a ${row.category} integration; only teammates and smart_fields integrations sync`);
          if (row.status !== 'active')
            throw new UsageError(`--integration: ${id} is ${row.status}; reconnect it first (sigsync integration reconnect ${id} --credentials-file ...)`);
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
        // A run already in progress (one that an earlier --follow stopped following, say) is not
        // started twice: it is named, and followed, its job carrying it on from its checkpoint.
        const startedIds = new Set(started.map((r) => r.id));
        const running = (await runningRuns(ctx.pool, workspaceId, ids)).filter((r) => !startedIds.has(r.id));
        if (!started.length && !running.length) {
          out('nothing to start: the integrations have lost access, or none is connected');
          return;
        }
        for (const r of started) out(`sync run ${r.id} started for ${r.integration_name} (${r.category})`);
        for (const r of running) out(`sync run ${r.id} is already running for ${r.integration_name} (${r.category})${opts.follow ? '; following it' : ''}`);
        if (!opts.follow) {
          out('a running worker (npm start, or sigsync worker) carries it out; follow it with: sigsync runs');
          return;
        }
        reportFinished(await follow(ctx, [...started, ...running], stallS * 1000), stallS);
      });
    });
  runsCommand(program);
}

/** `sigsync runs`: the recent sync runs, newest first. */
function runsCommand(program: Command): void {
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
    const [{ latestRuns }, { slowestStages }] = await Promise.all([import('../../integrations/queries.ts'), import('../../sync/timing.ts')]);
    const rows = await latestRuns(ctx.pool, { workspaceId: ws, integrationId: integ }, limit);
    const withStages = rows.map((r) => ({ ...r, slowest_stages: slowestStages(r.stage_ms) }));
    table(withStages, [
      'id',
      'integration',
      'status',
      'mode',
      'trigger',
      'pages',
      'seen',
      'created',
      'updated',
      'deleted',
      'errors',
      'started_at',
      'finished_at',
      'error',
      'slowest_stages',
    ]);
  });
}
