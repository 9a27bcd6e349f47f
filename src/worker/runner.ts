/**
 * The graphile-worker runner: wraps each registered task so its payload is parsed by zod, its logger
 * is the job's pino child, and its outcome is counted in metrics.
 */
import { run, parseCronItems, type Runner, type TaskList } from 'graphile-worker';
import type { AppContext } from '../context.ts';
import type { TaskDefinition } from '../tasks/define.ts';
import { tasks as registeredTasks, crontab } from '../tasks/index.ts';
import { failedByStop, graphileLogger } from '../graphileLogger.ts';
import { registerWorkerProcess, type LivenessOptions } from './liveness.ts';

export function buildTaskList(app: AppContext, tasks: TaskDefinition[]): TaskList {
  const list: TaskList = {};
  for (const def of tasks) {
    list[def.name] = async (raw, helpers) => {
      const logger = app.logger.child({ task: def.name, jobId: helpers.job.id, attempt: helpers.job.attempts });
      const parsed = def.payload.safeParse(raw ?? {});
      if (!parsed.success) {
        // Retrying cannot fix a payload; record it loudly and drop the job.
        app.metrics.jobs.inc({ task: def.name, outcome: 'invalid_payload' });
        logger.error({ issues: parsed.error.issues }, 'job payload is invalid; dropping the job');
        return;
      }
      const end = app.metrics.jobDuration.startTimer({ task: def.name });
      try {
        await def.run(parsed.data, { app, helpers, logger });
        app.metrics.jobs.inc({ task: def.name, outcome: 'succeeded' });
      } catch (err) {
        app.metrics.jobs.inc({ task: def.name, outcome: 'failed' });
        // Failed because this worker is stopping: it runs again, and its log line says so quietly.
        if (helpers.abortSignal.aborted && typeof err === 'object' && err !== null) failedByStop.add(err);
        throw err;
      } finally {
        end();
      }
    };
  }
  return list;
}

export interface WorkerOptions {
  /** Extra or replacement tasks (tests). */
  tasks?: TaskDefinition[];
  /** Run only these task names (e.g. a CLI command that processes its own runs). */
  only?: string[];
  concurrency?: number;
  pollInterval?: number;
  noCron?: boolean;
  /** Recovery of jobs locked by dead worker processes (see liveness.ts). */
  liveness?: LivenessOptions;
  /**
   * How long a stop lets running jobs finish before it aborts their signal (`helpers.abortSignal`;
   * a sync run then cancels its provider requests and resumes later from its checkpoint). Default 10 s.
   */
  abortJobsAfterMs?: number;
}

/**
 * Starts graphile-worker on the app's pool. The process registers itself first and releases the
 * jobs of worker processes that died holding them (liveness.ts); stopping the runner unregisters it.
 */
export async function startWorker(app: AppContext, opts: WorkerOptions = {}): Promise<Runner> {
  const tasks = [...registeredTasks, ...(opts.tasks ?? [])].filter((t) => !opts.only || opts.only.includes(t.name));
  const liveness = await registerWorkerProcess(app.pool, app.jobs, app.logger.child({ component: 'worker' }), opts.liveness);
  let runner: Runner;
  try {
    await liveness.recover();
    runner = await run({
      pgPool: app.pool,
      taskList: buildTaskList(app, tasks),
      parsedCronItems: opts.noCron ? [] : parseCronItems(crontab(app.config)),
      concurrency: opts.concurrency ?? app.config.WORKER_CONCURRENCY,
      pollInterval: opts.pollInterval ?? 1000,
      noHandleSignals: true,
      gracefulShutdownAbortTimeout: opts.abortJobsAfterMs ?? 10_000,
      logger: graphileLogger(app.logger),
      events: liveness.events,
    });
  } catch (err) {
    await liveness.close();
    throw err;
  }
  const unregistered = runner.promise.finally(() => liveness.close());
  unregistered.catch(() => {});
  const stop = runner.stop;
  const kill = runner.kill;
  return {
    ...runner,
    async stop(reason?: string) {
      await stop(reason);
      await liveness.close();
    },
    async kill(reason?: string) {
      await kill(reason);
      await liveness.close();
    },
    async [Symbol.asyncDispose]() {
      await stop('asyncDispose');
      await liveness.close();
    },
  };
}
