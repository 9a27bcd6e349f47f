/**
 * The click recorder: owner of `clicks`.
 *
 * The redirect answers at once and hands each click here; clicks wait in memory and are written in
 * batches, one multi-row INSERT (`unnest` of arrays) per flush, never one statement per click.
 * A click is held for `holdMs` (the link-scanner window) before it is written, so that a scanner
 * burst is flagged on every click of it, not only on the later ones (bots.ts). `close()` writes
 * everything still held, so a graceful shutdown loses nothing. A failed flush keeps its clicks and
 * is tried again; the click id is the primary key and a batch is written with ON CONFLICT DO
 * NOTHING, so a batch retried after an ambiguous failure is still stored once.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { ScannerDetector } from './bots.ts';

/**
 * One click as the recorder holds it: what differs per click, and what the scanner detector groups
 * by (anchor, signature, address). The rest of the attribution is read from the link when written.
 */
export interface Click {
  id: string;
  clickedAt: Date;
  linkId: string;
  anchorId: string;
  signatureId: string;
  emailId: string;
  countryCode: string;
  /** Keyed hash of the client address and user agent. */
  clicker: string;
  isBot: boolean;
  botReason: string | null;
}

export interface RecorderOptions {
  /** How often held clicks are looked at, ms. */
  flushEveryMs?: number;
  /** How long a click is held before it is written (the scanner window), ms. */
  holdMs?: number;
  /** Most clicks per INSERT. */
  maxBatch?: number;
}

/**
 * One INSERT for a batch. Only what differs per click is sent (id, time, link, country, clicker,
 * bot flag); the attribution (workspace, anchor, signature, campaign, teammate, address) is read
 * from the link in the same statement, which keeps each batch's parameters small.
 */
export async function insertClicks(db: Pick<pg.Pool, 'query'>, batch: Click[]): Promise<number> {
  const col = <T>(f: (c: Click) => T) => batch.map(f);
  const { rowCount } = await db.query(
    `insert into clicks (id, workspace_id, clicked_at, link_id, anchor_id, signature_id, campaign_id, teammate_id, email_id, country_code, clicker, is_bot, bot_reason)
     select u.id, l.workspace_id, to_timestamp(u.at / 1000.0), u.link, l.anchor_id, l.signature_id, case when a.source_kind = 'campaign' then a.source_id end,
            l.teammate_id, l.email_id, u.country, u.clicker, u.bot, u.reason
       from unnest($1::text[], $2::float8[], $3::bigint[], $4::text[], $5::text[], $6::boolean[], $7::text[]) as u(id, at, link, country, clicker, bot, reason)
       join anchor_links l on l.id = u.link join anchors a on a.id = l.anchor_id
     on conflict (id) do nothing`,
    [col((c) => c.id), col((c) => c.clickedAt.getTime()), col((c) => c.linkId), col((c) => c.countryCode), col((c) => c.clicker), col((c) => c.isBot), col((c) => c.botReason)],
  );
  return rowCount ?? 0;
}

export class ClickRecorder {
  readonly #pool: Pick<pg.Pool, 'query'>;
  readonly #logger: Logger;
  readonly #holdMs: number;
  readonly #maxBatch: number;
  readonly #scanners: ScannerDetector;
  #held: Click[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #closed = false;
  /** Clicks written so far by this recorder. */
  written = 0;

  constructor(pool: Pick<pg.Pool, 'query'>, logger: Logger, opts: RecorderOptions = {}) {
    this.#pool = pool;
    this.#logger = logger;
    this.#holdMs = opts.holdMs ?? 3000;
    this.#maxBatch = opts.maxBatch ?? 5000;
    this.#scanners = new ScannerDetector(this.#holdMs);
    this.#timer = setInterval(() => void this.flush(false), opts.flushEveryMs ?? 250);
    this.#timer.unref();
  }

  /** Takes one click; it is written within about `holdMs` plus one flush interval. */
  record(click: Click): void {
    if (this.#closed) throw new Error('the click recorder is closed');
    this.#scanners.observe(click);
    this.#held.push(click);
  }

  /** Clicks taken and not yet written. */
  get pending(): number {
    return this.#held.length;
  }

  /** Writes the clicks held longer than the window (all of them with `all`). One flush at a time. */
  flush(all: boolean): Promise<void> {
    this.#flushing ??= this.#flushOnce(all).finally(() => (this.#flushing = undefined));
    return this.#flushing;
  }

  async #flushOnce(all: boolean): Promise<void> {
    const cutoff = Date.now() - this.#holdMs;
    while (this.#held.length) {
      let n = 0;
      while (n < this.#held.length && n < this.#maxBatch && (all || this.#held[n]!.clickedAt.getTime() <= cutoff)) n++;
      if (n === 0) return;
      const batch = this.#held.slice(0, n);
      try {
        this.written += await insertClicks(this.#pool, batch);
      } catch (err) {
        this.#logger.warn({ err, clicks: batch.length }, 'writing clicks failed; they are kept and written again');
        return;
      }
      this.#held = this.#held.slice(n);
      this.#scanners.forget(cutoff);
    }
  }

  /** Stops taking clicks and writes every held one (retrying until `deadlineMs` has passed). */
  async close(deadlineMs = 10_000): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    const until = Date.now() + deadlineMs;
    await this.#flushing;
    while (this.#held.length && Date.now() < until) {
      await this.flush(true);
      if (this.#held.length) await new Promise((r) => setTimeout(r, 200));
    }
    if (this.#held.length) this.#logger.error({ clicks: this.#held.length }, 'clicks could not be written before shutdown');
  }
}

/** Retention: removes raw clicks older than `days` (their rollups stay). Returns the rows removed. */
export async function pruneClicks(db: Pick<pg.Pool, 'query'>, days: number): Promise<number> {
  const { rowCount } = await db.query(`delete from clicks where clicked_at < now() - make_interval(days => $1)`, [days]);
  return rowCount ?? 0;
}
