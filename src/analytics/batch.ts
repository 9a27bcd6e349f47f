/**
 * A batched recorder for raw analytics rows (clicks, views): the request path hands each row to
 * `record` and returns; rows wait in memory and are written in batches by `write` (one multi-row
 * INSERT per batch, never one statement per row). A row is held for `holdMs` before it is written
 * (0 writes at the next flush). `close()` writes everything still held, so a graceful shutdown loses
 * nothing. A failed write keeps its rows and is tried again; writers insert with ON CONFLICT DO
 * NOTHING on a per-row id, so a batch retried after an ambiguous failure is still stored once.
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
}

export class BatchRecorder<T> {
  readonly #pool: Pick<pg.Pool, 'query'>;
  readonly #logger: Logger;
  readonly #spec: BatchSpec<T>;
  protected readonly holdMs: number;
  readonly #maxBatch: number;
  #held: T[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;
  /** Rows written so far by this recorder. */
  written = 0;

  constructor(pool: Pick<pg.Pool, 'query'>, logger: Logger, spec: BatchSpec<T>, opts: RecorderOptions = {}) {
    this.#pool = pool;
    this.#logger = logger;
    this.#spec = spec;
    this.holdMs = opts.holdMs ?? spec.holdMs;
    this.#maxBatch = opts.maxBatch ?? 5000;
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
        this.written += await this.#spec.write(this.#pool, batch);
      } catch (err) {
        this.#logger.warn({ err, [this.#spec.what]: batch.length }, `writing ${this.#spec.what} failed; they are kept and written again`);
        return;
      }
      this.#held = this.#held.slice(n);
      this.#spec.written?.(cutoff);
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
