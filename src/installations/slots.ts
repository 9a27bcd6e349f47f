/**
 * One install at a time per mailbox slot (address, kind, integration).
 *
 * Install jobs are keyed by their slot, so a burst of triggers coalesces into one queued job; but a
 * trigger that arrives while the slot's job is running adds a second job, which another worker may
 * take at once. Without exclusion, both would read "not installed yet" and write the same content
 * twice, or the older render could land after the newer one and stay. The install job therefore
 * holds the slot (a row in `install_slots` naming its graphile-worker job) from before it reads the
 * state until its outcome is recorded; a second job waits, then reads the first one's outcome (the
 * same content is then unchanged and not written again).
 *
 * The row is only a claim while its job is locked: a finished job is deleted and a failed one
 * unlocked, and the jobs of a dead worker process are unlocked by the live ones (src/worker/
 * liveness.ts). So a crash never leaves a slot held, and the retry of a job holds its own slot.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import type { SignatureKind } from '../domain.ts';

/** One mailbox slot: an address, a kind and the integration that installs it. */
export interface Slot {
  emailId: string;
  kind: SignatureKind;
  integrationId: string;
}

export interface SlotOptions {
  /** How often a waiting job asks again (default 100 ms). */
  pollMs?: number;
  /** Give up waiting after this long; the job then fails and is retried (default 60 s). */
  maxWaitMs?: number;
  /** Told when the job had to wait for the slot. */
  logger?: Logger;
  /** Stop waiting (the worker is shutting down); the job fails and is retried. */
  signal?: AbortSignal;
}

export class SlotBusyError extends Error {
  constructor(waitedMs: number) {
    super(`another install of this mailbox has been running for over ${waitedMs} ms; retrying later`);
    this.name = 'SlotBusyError';
  }
}

/** Claims the slot for the job; true when the job holds it. */
async function claim(pool: pg.Pool, job: Slot, jobId: string): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'install_slot_claim',
    text: `insert into install_slots as s (email_id, kind, integration_id, job_id) values ($1, $2, $3, $4)
     on conflict (email_id, kind, integration_id) do update set job_id = excluded.job_id, acquired_at = now()
      where s.job_id = excluded.job_id
         or not exists (select 1 from graphile_worker.jobs j where j.id = s.job_id and j.locked_at is not null)
     returning job_id`,
    values: [job.emailId, job.kind, job.integrationId, jobId],
  });
  return rowCount === 1;
}

/** Runs `fn` while the job holds the mailbox slot, waiting for another job that holds it. */
export async function withInstallSlot<T>(pool: pg.Pool, job: Slot, jobId: string, fn: () => Promise<T>, opts: SlotOptions = {}): Promise<T> {
  const pollMs = opts.pollMs ?? 100;
  const maxWaitMs = opts.maxWaitMs ?? 60_000;
  const started = Date.now();
  let waited = false;
  while (!(await claim(pool, job, jobId))) {
    waited = true;
    if (Date.now() - started >= maxWaitMs) throw new SlotBusyError(Date.now() - started);
    opts.signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, pollMs / 2 + Math.random() * pollMs));
  }
  if (waited) opts.logger?.info({ waitedMs: Date.now() - started }, 'waited for another install of this mailbox to finish');
  try {
    return await fn();
  } finally {
    await pool
      .query({
        name: 'install_slot_release',
        text: 'delete from install_slots where email_id = $1 and kind = $2 and integration_id = $3 and job_id = $4',
        values: [job.emailId, job.kind, job.integrationId, jobId],
      })
      .catch(() => {}); // the claim lapses with the job's lock anyway
  }
}
