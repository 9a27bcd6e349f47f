/**
 * Recovery of jobs locked by dead worker processes.
 *
 * graphile-worker marks a job it runs with `locked_by` (the worker id) and only frees it on its own
 * after 4 hours. A worker process that is killed (SIGKILL, OOM, a lost host) would thus hold its
 * jobs for hours. Here each worker process registers itself in `worker_heartbeats` together with the
 * ids its graphile-worker pool locks jobs with, and holds a session-level advisory lock keyed by its row id on a
 * connection of its own for as long as it lives. Postgres drops that lock as soon as the
 * connection goes away, so a row whose lock another session can take belongs to a dead process.
 *
 * `recover()` runs before the runner starts and then every `recoverEveryMs` (default 10 s) in every
 * live worker process: it unlocks (graphile-worker's `forceUnlockWorkers`) the jobs and queues of
 * dead processes' worker ids and deletes their rows. Jobs locked by an id that no row knows (a
 * process killed in the instant between its worker taking a job and the id being recorded, or a
 * worker from before this table) are unlocked once their lock is older than `unregisteredAfterMs`
 * (default 10 minutes). Unlocked jobs run again: jobs are at-least-once, and every task is written
 * to be safe to repeat.
 *
 * A process that stops its worker leaves no job locked: graphile-worker records the outcome of the
 * last jobs (a failure from an aborted job, a completion) without awaiting it, after its stop has
 * returned, so `close()` waits for those records (at most CLOSE_SETTLE_MS) and then unlocks what
 * its worker ids still hold, before the process's pool is ended under them.
 */
import { EventEmitter } from 'node:events';
import os from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { WorkerEvents, WorkerUtils } from 'graphile-worker';

/** How long close() waits for graphile-worker's last job outcomes to be written before it unlocks the rest. */
const CLOSE_SETTLE_MS = 5_000;

/** First half of the two-int advisory lock key; the second half is the row id. */
const LOCK_NAMESPACE = 0x5167_7711;

export interface LivenessOptions {
  /** How often a live process looks for dead ones (default 10 000 ms; 0 = only at start). */
  recoverEveryMs?: number;
  /** Age after which a lock held by an unregistered worker id is released (default 10 minutes). */
  unregisteredAfterMs?: number;
}

export interface WorkerLiveness {
  /** This process's row id. */
  readonly id: number;
  /** Pass to graphile-worker's `run({ events })`: records every worker id the pool creates. */
  readonly events: WorkerEvents;
  /** Releases the jobs of dead processes now; returns the worker ids it unlocked. */
  recover(): Promise<string[]>;
  /** Stops the timer, deletes this process's row and frees its connection. */
  close(): Promise<void>;
}

/**
 * Releases the jobs of dead processes: rows of other processes whose lock can be taken (their
 * session is gone), and jobs locked for longer than `unregisteredAfterMs` by workers no row names.
 * Answers the worker ids it unlocked.
 */
async function releaseDeadWorkers(pool: pg.Pool, utils: WorkerUtils, logger: Logger, ownId: number, unregisteredAfterMs: number): Promise<string[]> {
  const dead: string[] = [];
  const c = await pool.connect();
  try {
    const { rows } = await c.query<{ id: number; worker_ids: string[] }>('select id, worker_ids from worker_heartbeats where id <> $1', [ownId]);
    for (const row of rows) {
      const { rows: got } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [LOCK_NAMESPACE, row.id]);
      if (!got[0]!.ok) continue;
      try {
        dead.push(...row.worker_ids);
        await c.query('delete from worker_heartbeats where id = $1', [row.id]);
      } finally {
        await c.query('select pg_advisory_unlock($1, $2)', [LOCK_NAMESPACE, row.id]);
      }
    }
    const { rows: orphans } = await c.query<{ locked_by: string }>(
      `select distinct locked_by from graphile_worker.jobs j
        where locked_by is not null and locked_at < now() - make_interval(secs => $1::float8 / 1000)
          and not exists (select 1 from worker_heartbeats h where j.locked_by = any(h.worker_ids))`,
      [unregisteredAfterMs],
    );
    dead.push(...orphans.map((o) => o.locked_by));
  } finally {
    c.release();
  }
  if (dead.length) {
    await utils.forceUnlockWorkers(dead);
    logger.warn({ workerIds: dead }, 'released the jobs of worker processes that no longer run');
  }
  return dead;
}

/**
 * After the worker stopped: waits for the jobs its ids lock to be released (graphile-worker writes a
 * job's outcome without awaiting it), and unlocks those still locked after CLOSE_SETTLE_MS.
 */
async function releaseOwnJobs(pool: pg.Pool, utils: WorkerUtils, logger: Logger, workerIds: string[]): Promise<void> {
  if (!workerIds.length) return;
  const locked = async () =>
    (await pool.query<{ n: number }>('select count(*)::int as n from graphile_worker.jobs where locked_by = any($1::text[])', [workerIds])).rows[0]!.n;
  const deadline = Date.now() + CLOSE_SETTLE_MS;
  let n = await locked();
  while (n > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    n = await locked();
  }
  if (n > 0) {
    await utils.forceUnlockWorkers(workerIds);
    logger.warn({ jobs: n, workerIds }, 'unlocked the jobs this stopped worker still held; they run again');
  }
}

/**
 * Inserts the process's row and takes its lock in one transaction, so nobody sees the row unlocked;
 * answers the connection that holds the lock. `onId` gets the row's id as soon as it is inserted;
 * `onError` is the connection's error handler.
 */
async function registerRow(
  pool: pg.Pool,
  workerIds: string[],
  onId: (id: number) => void,
  onError: (c: pg.PoolClient, err: Error) => void,
): Promise<pg.PoolClient> {
  const c = await pool.connect();
  c.on('error', (err) => onError(c, err));
  try {
    await c.query('begin');
    const { rows } = await c.query<{ id: number }>(`insert into worker_heartbeats (worker_ids, hostname, pid) values ($1, $2, $3) returning id`, [
      workerIds,
      os.hostname(),
      process.pid,
    ]);
    const id = rows[0]!.id;
    onId(id);
    await c.query('select pg_advisory_lock($1, $2)', [LOCK_NAMESPACE, id]);
    await c.query('commit');
  } catch (err) {
    c.release(err as Error);
    throw err;
  }
  return c;
}

export async function registerWorkerProcess(pool: pg.Pool, utils: WorkerUtils, logger: Logger, opts: LivenessOptions = {}): Promise<WorkerLiveness> {
  const recoverEveryMs = opts.recoverEveryMs ?? 10_000;
  const unregisteredAfterMs = opts.unregisteredAfterMs ?? 10 * 60_000;
  const workerIds: string[] = [];
  let client: pg.PoolClient | undefined;
  let id = 0;
  let pending: Promise<unknown> = Promise.resolve();
  let closed = false;
  let closing: Promise<void> | undefined;

  const register = async () => {
    client = await registerRow(
      pool,
      workerIds,
      (rowId) => (id = rowId),
      (c, err) => {
        // The connection is gone and our lock with it: other processes will release our jobs (they
        // run again, at least once). Register anew on the next tick. The dead client goes back to
        // the pool destroyed: one still checked out would keep the pool's end() waiting for ever.
        if (client !== c) return;
        client = undefined;
        c.release(err);
      },
    );
  };

  const recover = () => releaseDeadWorkers(pool, utils, logger, id, unregisteredAfterMs);

  const tick = async () => {
    if (closed) return;
    if (!client) await register();
    else await client.query('update worker_heartbeats set seen_at = now(), worker_ids = $2 where id = $1', [id, workerIds]);
    await recover();
  };

  await register();
  const events: WorkerEvents = new EventEmitter();
  // graphile-worker 0.18 locks jobs with its pool's id (older versions: the worker's); record both.
  const remember = (workerId: string) => {
    workerIds.push(workerId);
    const c = client;
    if (!c) return;
    pending = pending
      .then(() => c.query('update worker_heartbeats set worker_ids = array_append(worker_ids, $2) where id = $1', [id, workerId]))
      .catch(() => {});
  };
  events.on('pool:create', ({ workerPool }) => remember(workerPool.id));
  events.on('worker:create', ({ worker }) => remember(worker.workerId));
  const timer =
    recoverEveryMs > 0
      ? setInterval(() => void tick().catch((err: unknown) => logger.warn({ err }, 'worker liveness check failed')), recoverEveryMs)
      : undefined;
  timer?.unref();

  return {
    get id() {
      return id;
    },
    events,
    recover,
    close() {
      closing ??= (async () => {
        closed = true;
        if (timer) clearInterval(timer);
        await pending;
        await releaseOwnJobs(pool, utils, logger, workerIds).catch((err: unknown) =>
          logger.warn({ err }, 'could not check the jobs this stopped worker held; other workers release them'),
        );
        const c = client;
        client = undefined;
        if (!c) return;
        try {
          await c.query('delete from worker_heartbeats where id = $1', [id]);
          await c.query('select pg_advisory_unlock($1, $2)', [LOCK_NAMESPACE, id]);
        } finally {
          c.release();
        }
      })();
      return closing;
    },
  };
}
