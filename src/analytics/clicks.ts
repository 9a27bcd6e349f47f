/**
 * The click recorder: owner of `clicks`.
 *
 * The redirect answers at once and hands each click here; clicks wait in memory and are written in
 * batches by the batched recorder (batch.ts), one multi-row INSERT (`unnest` of arrays) per flush,
 * never one statement per click. A click is held for 3 s (the link-scanner window) before it is
 * written, so that a scanner burst is flagged on every click of it, not only on the later ones
 * (bots.ts). The click id is the primary key and a batch is written with ON CONFLICT DO NOTHING, so
 * a batch retried after an ambiguous failure is still stored once.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { BatchRecorder, type RecorderOptions } from './batch.ts';
import { ScannerDetector } from './bots.ts';
import type { TrafficClass } from './classify.ts';
import { retentionDays, workspacesNotPerPerson } from '../db/workspaces.ts';

export type { RecorderOptions } from './batch.ts';

/** How long a click is held before it is written: the link-scanner window (bots.ts), ms. */
const CLICK_HOLD_MS = 3000;

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
  /** Keyed hash of the client address alone (bots.ts `addressHash`); without it, `clicker` stands for it. */
  address?: string;
  isBot: boolean;
  botReason: string | null;
  /** Who made it (classify.ts): a person, a scanner, a proxy, or unknown; with the reasons and the network. */
  /** Without it (rows written by tests and tools), a bot's click is a scanner's (an image proxy's a proxy's), the rest a person's. */
  trafficClass?: TrafficClass;
  reasons?: string[];
  asn?: number | null;
  org?: string | null;
}

const classOf = (c: Click): TrafficClass => c.trafficClass ?? (!c.isBot ? 'human' : c.botReason === 'image_proxy' ? 'proxy' : 'scanner');

/**
 * One INSERT for a batch. Only what differs per click is sent (id, time, link, country, clicker and
 * its address, bot flag); the attribution (workspace, anchor, signature, campaign, teammate, address) is read
 * from the link in the same statement, which keeps each batch's parameters small.
 */
export async function insertClicks(db: Pick<pg.Pool, 'query'>, batch: Click[]): Promise<number> {
  const col = <T>(f: (c: Click) => T) => batch.map(f);
  const { rowCount } = await db.query(
    `insert into clicks (id, workspace_id, clicked_at, link_id, anchor_id, signature_id, campaign_id, teammate_id, email_id, country_code, clicker, clicker_address, is_bot, bot_reason, traffic_class, class_reasons, network_asn, network_org)
     select u.id, l.workspace_id, to_timestamp(u.at / 1000.0), u.link, l.anchor_id, l.signature_id, case when a.source_kind = 'campaign' then a.source_id end,
            l.teammate_id, l.email_id, u.country, u.clicker, coalesce(u.address, u.clicker), u.bot, u.reason,
            u.class, coalesce(string_to_array(nullif(u.reasons, ''), ' '), '{}'), u.asn, u.org
       from unnest($1::text[], $2::float8[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[], $9::text[], $10::text[], $11::int[], $12::text[])
         as u(id, at, link, country, clicker, address, bot, reason, class, reasons, asn, org)
       join anchor_links l on l.id = u.link join anchors a on a.id = l.anchor_id
     on conflict (id) do nothing`,
    [
      col((c) => c.id),
      col((c) => c.clickedAt.getTime()),
      col((c) => c.linkId),
      col((c) => c.countryCode),
      col((c) => c.clicker),
      col((c) => c.address ?? null),
      col((c) => c.isBot),
      col((c) => c.botReason),
      col(classOf),
      col((c) => (c.reasons ?? (c.botReason ? [c.botReason] : [])).join(' ')),
      col((c) => c.asn ?? null),
      col((c) => c.org ?? null),
    ],
  );
  return rowCount ?? 0;
}

/** The click recorder: a batched recorder that also finds link-scanner bursts among held clicks. */
export class ClickRecorder extends BatchRecorder<Click> {
  readonly #scanners: ScannerDetector;

  constructor(pool: Pick<pg.Pool, 'query'>, logger: Logger, opts: RecorderOptions = {}) {
    const scanners = new ScannerDetector(opts.holdMs ?? CLICK_HOLD_MS);
    super(
      pool,
      logger,
      {
        what: 'clicks',
        timeOf: (c) => c.clickedAt.getTime(),
        write: insertClicks,
        idOf: (c) => c.id,
        holdMs: CLICK_HOLD_MS,
        written: (cutoff) => scanners.forget(cutoff),
      },
      opts,
    );
    this.#scanners = scanners;
  }

  /** Takes one click; it is written within about the hold (3 s) plus one flush interval. */
  override record(click: Click): void {
    this.#scanners.observe(click);
    super.record(click);
  }
}

/**
 * Retention: removes raw clicks older than the workspace's `analytics_retention_days`, or
 * `defaultDays` where it has none (their rollups stay). Returns the rows removed.
 */
export async function pruneClicks(db: Pick<pg.Pool, 'query'>, defaultDays: number): Promise<number> {
  const w = await retentionDays(db, defaultDays);
  const { rowCount } = await db.query(
    `delete from clicks c using unnest($1::uuid[], $2::int[]) as w(id, days) where w.id = c.workspace_id and c.clicked_at < now() - make_interval(days => w.days)`,
    [w.ids, w.days],
  );
  return rowCount ?? 0;
}

/**
 * Which rows lose their clicker keys (docs/privacy.md): those of workspaces whose clicks are not
 * tracked per person, and those of a browser or an address that opted out.
 */
const KEYED_CLICKS = `select c.id, c.workspace_id, c.clicked_at, c.clicker, c.link_id from clicks c
  where c.clicker is not null and ($1::uuid is null or c.workspace_id = $1)
    and (c.workspace_id = any($3::uuid[])
         or exists (select from analytics_opt_outs o where o.workspace_id = c.workspace_id and ((o.kind = 'browser' and o.key = c.clicker) or (o.kind = 'address' and o.key = c.clicker_address))))`;

/**
 * Removes the clicker keys (`clicker`, `clicker_address`) of the rows above once older than
 * `olderThan`, after marking the repeats their key decided (as views.ts `dropViewerKeys`).
 */
export async function dropClickerKeys(db: Pick<pg.Pool, 'query'>, o: { workspaceId: string | null; window: string; olderThan: string }): Promise<number> {
  const aggregate = await workspacesNotPerPerson(db, 'clicks', o.workspaceId);
  await db.query(
    `update clicks c set is_repeat = true
       from (select id, coalesce(clicked_at - lag(clicked_at) over (partition by workspace_id, clicker, link_id order by clicked_at, id) < $2::interval, false) as repeat
               from (${KEYED_CLICKS}) k) r
      where c.id = r.id and r.repeat and not c.is_repeat`,
    [o.workspaceId, o.window, aggregate],
  );
  const { rowCount } = await db.query(
    `update clicks c set clicker = null, clicker_address = null from (${KEYED_CLICKS}) k where c.id = k.id and k.clicked_at < now() - $2::interval`,
    [o.workspaceId, o.olderThan, aggregate],
  );
  return rowCount ?? 0;
}

/** The ids of the clicks of one browser or address in a workspace (an opt-out), their keys removed at once. */
export async function dropClickerKey(db: Pick<pg.Pool, 'query'>, workspaceId: string, clicker: string, address: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    'update clicks set clicker = null, clicker_address = null where workspace_id = $1 and (clicker = $2 or clicker_address = $3) returning id',
    [workspaceId, clicker, address],
  );
  return rows.map((r) => r.id);
}

/** Removes the given clicks (a visitor's, on erasure). */
export async function deleteClicks(db: Pick<pg.Pool, 'query'>, workspaceId: string, ids: string[]): Promise<number> {
  const { rowCount } = await db.query('delete from clicks where workspace_id = $1 and id = any($2::text[])', [workspaceId, ids]);
  return rowCount ?? 0;
}

/** How many of these clicks the workspace has recorded (the batched recorder writes them a moment after the redirect). */
export async function countRecordedClicks(db: Pick<pg.Pool, 'query'>, workspaceId: string, ids: readonly string[]): Promise<number> {
  return (await db.query<{ n: number }>('select count(*)::int as n from clicks where workspace_id = $1 and id = any($2::text[])', [workspaceId, ids])).rows[0]!
    .n;
}
