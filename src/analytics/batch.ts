/**
 * A batched recorder for raw analytics rows (clicks, views): the request path hands each row to
 * `record` and returns; rows wait in memory and are written in batches by `write` (one multi-row
 * INSERT per batch, never one statement per row). A row is held for `holdMs` before it is written
 * (0 writes at the next flush). `close()` writes everything still held, so a graceful shutdown loses
 * nothing. A failed write keeps its rows and is tried again; writers insert with ON CONFLICT DO
 * NOTHING on a per-row id, so a batch retried after an ambiguous failure is still stored once.
 *
 * A batch the database refuses for a row's data (SQLSTATE class 22, data exception, or 23, a
 * constraint) would be refused forever and hold back every later row: it is split in halves until
 * each refused row is alone; those are logged (their id and the database's reason) and dropped, and
 * counted (`dropped`, `onDropped`: sigsync_analytics_rows_dropped_total on /metrics); the rest are
 * written. Any other failure (a lost connection, a timeout) keeps the rows for the next flush.
 */
import type pg from 'pg';
import type { Logger } from 'pino';

export interface RecorderOptions {
  /** How often held rows are looked at, ms (default 250). */
  flushEveryMs?: number;
  /** How long a row is held before it is written, ms (the recorder's own default). */
  holdMs?: number;
  /** Most rows per INSERT (default 5000). */
  maxBatch?: number;
  /** Called with the number of rows dropped because the database refused their data. */
  onDropped?: (n: number) => void;
}

/** Whether the database refused the statement for the data it was given (a row's), not for its own state. */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

export interface BatchSpec<T> {
  /** What the rows are, for log lines ("clicks", "views"). */
  what: string;
  /** When the row happened (epoch ms). */
  timeOf(row: T): number;
  /** Writes one batch; answers the rows stored. */
  write(db: Pick<pg.Pool, 'query'>, batch: T[]): Promise<number>;
  /** Default hold, ms. */
  holdMs: number;
  /** Called after each written batch with the hold cutoff (epoch ms). */
  written?(cutoff: number): void;
  /** The row's id, for the log line of a dropped row (no personal data). */
  idOf(row: T): string;
}

export class BatchRecorder<T> {
  readonly #pool: Pick<pg.Pool, 'query'>;
  readonly #logger: Logger;
  readonly #spec: BatchSpec<T>;
  protected readonly holdMs: number;
  readonly #maxBatch: number;
  readonly #onDropped: ((n: number) => void) | undefined;
  #held: T[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;
  /** Rows written so far by this recorder. */
  written = 0;
  /** Rows dropped so far because the database refused their data. */
  dropped = 0;

  constructor(pool: Pick<pg.Pool, 'query'>, logger: Logger, spec: BatchSpec<T>, opts: RecorderOptions = {}) {
    this.#pool = pool;
    this.#logger = logger;
    this.#spec = spec;
    this.holdMs = opts.holdMs ?? spec.holdMs;
    this.#maxBatch = opts.maxBatch ?? 5000;
    this.#onDropped = opts.onDropped;
    this.#timer = setInterval(() => void this.flush(false), opts.flushEveryMs ?? 250);
    this.#timer.unref();
  }

  /** Takes one row; it is written within about `holdMs` plus one flush interval. */
  record(row: T): void {
    if (this.#closed) throw new Error(`the ${this.#spec.what} recorder is closed`);
    this.#held.push(row);
  }

  /** Rows taken and not yet written. */
  get pending(): number {
    return this.#held.length;
  }

  /** Writes the rows held longer than the hold (all of them with `all`). One flush at a time. */
  flush(all: boolean): Promise<void> {
    this.#flushing ??= this.#flushOnce(all).finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #flushOnce(all: boolean): Promise<void> {
    const cutoff = Date.now() - this.holdMs;
    while (this.#held.length) {
      let n = 0;
      while (n < this.#held.length && n < this.#maxBatch && (all || this.#spec.timeOf(this.#held[n]!) <= cutoff)) n++;
      if (n === 0) return;
      const batch = this.#held.slice(0, n);
      try {
        await this.#write(batch);
      } catch (err) {
        this.#logger.warn({ err, [this.#spec.what]: batch.length }, `writing ${this.#spec.what} failed; they are kept and written again`);
        return;
      }
      this.#held = this.#held.slice(n);
      this.#spec.written?.(cutoff);
    }
  }

  /**
   * Writes one batch; a batch refused for a row's data is split until the refused rows are alone,
   * and those are dropped (module comment). Throws any other failure: the caller keeps the batch
   * (halves already written are stored once again at the retry: ON CONFLICT DO NOTHING).
   */
  async #write(batch: T[]): Promise<void> {
    try {
      this.written += await this.#spec.write(this.#pool, batch);
    } catch (err) {
      if (!isDataError(err)) throw err;
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await this.#write(batch.slice(0, half));
        await this.#write(batch.slice(half));
        return;
      }
      const e = err as { code: string; constraint?: string; message?: string };
      this.#logger.error(
        { id: this.#spec.idOf(batch[0]!), code: e.code, constraint: e.constraint, reason: e.message },
        `the database refused one of the ${this.#spec.what}; it is dropped`,
      );
      this.dropped++;
      this.#onDropped?.(1);
    }
  }

  /** Stops taking rows and writes every held one (retrying until `deadlineMs` has passed). */
  async close(deadlineMs = 10_000): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const until = Date.now() + deadlineMs;
    await this.#flushing;
    while (this.#held.length && Date.now() < until) {
      await this.flush(true);
      if (this.#held.length) await new Promise((r) => setTimeout(r, 200));
    }
    if (this.#held.length) this.#logger.error({ [this.#spec.what]: this.#held.length }, `${this.#spec.what} could not be written before shutdown`);
  }
}
