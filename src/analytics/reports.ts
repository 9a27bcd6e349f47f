/**
 * The analytics reports, read from the rollups (rollups.ts), never from raw clicks or views. Every
 * query is scoped to one workspace. A range is whole UTC days, `from` to `to` inclusive.
 *
 * Figures are people's by default: `clicks`, `views` and the unique counts are the `human` class's
 * (classify.ts); each other class is counted beside them (`scanner_*`, `proxy_*`, `unknown_*`), and
 * `all_clicks`/`all_views` count every row. `ctr` (click-through rate) is human clicks ÷ human-or-unknown
 * views, to four decimals, null without such views (docs/analytics.md).
 */
import type { Queryable } from '../db/tx.ts';
import type { TrackingMode } from '../db/workspaces.ts';

export type Dimension = 'signature' | 'campaign' | 'teammate' | 'country' | 'anchor';
export type Granularity = 'daily' | 'hourly';

export interface Range {
  /** First day, 00:00 UTC. */
  from: Date;
  /** The day after the last one, 00:00 UTC. */
  until: Date;
}

export interface Metrics {
  clicks: number;
  human_clicks: number;
  bot_clicks: number;
  scanner_clicks: number;
  proxy_clicks: number;
  unknown_clicks: number;
  all_clicks: number;
  unique_clickers: number;
  visitors: number;
  events: number;
  conversions: number;
  views: number;
  direct_views: number;
  proxied_views: number;
  bot_views: number;
  unique_views: number;
  unique_direct_views: number;
  scanner_views: number;
  proxy_views: number;
  unknown_views: number;
  all_views: number;
  ctr: number | null;
  conversion_value: { currency: string; value: number; conversions: number }[];
}

export interface SeriesPoint {
  period_start: string;
  clicks: number;
  human_clicks: number;
  bot_clicks: number;
  unique_clickers: number;
  visitors: number;
  conversions: number;
  views: number;
  proxied_views: number;
  unique_views: number;
  scanner_clicks: number;
  proxy_clicks: number;
  unknown_clicks: number;
  scanner_views: number;
  proxy_views: number;
  unknown_views: number;
}

/** Sums of the rollups (rollups.ts): the spec's fields hold the human class's figures, each other class beside them. */
const SUM_FIELDS = [
  'human_clicks as clicks',
  'human_clicks',
  'bot_clicks',
  'scanner_clicks',
  'proxy_clicks',
  'unknown_clicks',
  'clicks as all_clicks',
  'unique_clickers',
  'visitors',
  'events',
  'conversions',
  'human_views as views',
  'human_views as direct_views',
  'proxy_views as proxied_views',
  'scanner_views as bot_views',
  'unique_human_views as unique_views',
  'unique_human_views as unique_direct_views',
  'scanner_views',
  'proxy_views',
  'unknown_views',
  'views as all_views',
].map((f) => f.split(' as ') as [string, string?]);
const SUMS = SUM_FIELDS.map(([column, name = column]) => `coalesce(sum(${column}), 0)::int as ${name}`).join(', ');

type Counts = Omit<Metrics, 'conversion_value' | 'ctr'>;

/** Human clicks ÷ human-or-unknown views, four decimals; null without such views. */
export function ctr(humanClicks: number, views: number): number | null {
  return views > 0 ? Math.round((humanClicks / views) * 10_000) / 10_000 : null;
}

const withCtr = <T extends Counts>(c: T) => ({ ...c, ctr: ctr(c.human_clicks, c.views + c.unknown_views) });

/** Conversion value per currency for the given keys of a dimension, by key. */
async function values(db: Queryable, ws: string, dimension: string, keys: string[], r: Range): Promise<Map<string, Metrics['conversion_value']>> {
  const out = new Map<string, Metrics['conversion_value']>();
  if (!keys.length) return out;
  const { rows } = await db.query<{ key: string; currency: string; value: number; conversions: number }>(
    `select key, currency, sum(value)::float8 as value, sum(conversions)::int as conversions from analytics_rollup_values
      where workspace_id = $1 and dimension = $2 and grain = 'day' and bucket >= $3 and bucket < $4 and key = any($5::text[])
      group by key, currency order by key, currency`,
    [ws, dimension, r.from, r.until, keys],
  );
  for (const row of rows) {
    const list = out.get(row.key) ?? [];
    list.push({ currency: row.currency, value: Math.round(row.value * 1e6) / 1e6, conversions: row.conversions });
    out.set(row.key, list);
  }
  return out;
}

/** Totals of one key of a dimension (`total` with key '' for the whole workspace). */
export async function totals(db: Queryable, ws: string, dimension: Dimension | 'total', key: string, r: Range): Promise<Metrics> {
  const { rows } = await db.query<Counts>(
    `select ${SUMS} from analytics_rollups where workspace_id = $1 and dimension = $2 and key = $3 and grain = 'day' and bucket >= $4 and bucket < $5`,
    [ws, dimension, key, r.from, r.until],
  );
  return { ...withCtr(rows[0]!), conversion_value: (await values(db, ws, dimension, [key], r)).get(key) ?? [] };
}

/** A series point's fields from the rollups' columns: people's figures first, then each other class. */
const POINT = [
  ['human_clicks', 'clicks'],
  ['human_clicks', 'human_clicks'],
  ['bot_clicks', 'bot_clicks'],
  ['unique_clickers', 'unique_clickers'],
  ['visitors', 'visitors'],
  ['conversions', 'conversions'],
  ['human_views', 'views'],
  ['proxy_views', 'proxied_views'],
  ['unique_human_views', 'unique_views'],
  ['scanner_clicks', 'scanner_clicks'],
  ['proxy_clicks', 'proxy_clicks'],
  ['unknown_clicks', 'unknown_clicks'],
  ['scanner_views', 'scanner_views'],
  ['proxy_views', 'proxy_views'],
  ['unknown_views', 'unknown_views'],
] as const;

/** One point per day or hour of the range, zeros included. */
export async function series(
  db: Queryable,
  ws: string,
  dimension: 'total' | 'anchor',
  key: string,
  r: Range,
  granularity: Granularity,
): Promise<SeriesPoint[]> {
  const grain = granularity === 'hourly' ? 'hour' : 'day';
  const { rows } = await db.query<Omit<SeriesPoint, 'period_start'> & { period_start: Date }>(
    `select p.period_start, ${POINT.map(([column, name]) => `coalesce(x.${column}, 0)::int as ${name}`).join(', ')}
       from generate_series($4::timestamptz, $5::timestamptz - make_interval(secs => 1), make_interval(hours => ${grain === 'hour' ? 1 : 24})) as p(period_start)
       left join analytics_rollups x on x.workspace_id = $1 and x.dimension = $2 and x.key = $3 and x.grain = '${grain}' and x.bucket = p.period_start
      order by p.period_start`,
    [ws, dimension, key, r.from, r.until],
  );
  return rows.map((p) => ({ ...p, period_start: p.period_start.toISOString() }));
}

export interface KeyedMetrics extends Metrics {
  key: string;
}

/** One page of a dimension's keys with activity in the range, most clicks first (then views, events, key). */
export async function breakdown(
  db: Queryable,
  ws: string,
  dimension: Exclude<Dimension, 'anchor'>,
  r: Range,
  page: { limit: number; offset: number },
): Promise<{ rows: KeyedMetrics[]; total: number }> {
  const { rows } = await db.query<Counts & { key: string; total: number }>(
    `select key, ${SUMS}, count(*) over ()::int as total from analytics_rollups
      where workspace_id = $1 and dimension = $2 and grain = 'day' and bucket >= $3 and bucket < $4
      group by key order by sum(human_clicks) desc, sum(human_views) desc, sum(events) desc, key limit $5 offset $6`,
    [ws, dimension, r.from, r.until, page.limit, page.offset],
  );
  const total = rows[0]?.total ?? (await countKeys(db, ws, dimension, r));
  const vals = await values(
    db,
    ws,
    dimension,
    rows.map((x) => x.key),
    r,
  );
  return { rows: rows.map(({ total: _t, ...x }) => ({ ...withCtr(x), conversion_value: vals.get(x.key) ?? [] })), total };
}

async function countKeys(db: Queryable, ws: string, dimension: string, r: Range): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(distinct key)::int as n from analytics_rollups where workspace_id = $1 and dimension = $2 and grain = 'day' and bucket >= $3 and bucket < $4`,
    [ws, dimension, r.from, r.until],
  );
  return rows[0]!.n;
}

/** Metrics of the given keys (anchors of one page), by key; keys without activity get zeros. */
export async function metricsOf(db: Queryable, ws: string, dimension: Dimension, keys: string[], r: Range): Promise<Map<string, Metrics>> {
  const { rows } = await db.query<Counts & { key: string }>(
    `select key, ${SUMS} from analytics_rollups where workspace_id = $1 and dimension = $2 and grain = 'day' and bucket >= $3 and bucket < $4 and key = any($5::text[]) group by key`,
    [ws, dimension, r.from, r.until, keys],
  );
  const vals = await values(db, ws, dimension, keys, r);
  const zero = Object.fromEntries(SUM_FIELDS.map(([column, name = column]) => [name, 0])) as unknown as Counts;
  const found = new Map(rows.map(({ key, ...x }) => [key, x]));
  return new Map(keys.map((k) => [k, { ...withCtr(found.get(k) ?? zero), conversion_value: vals.get(k) ?? [] }]));
}

/** Human clicks per installed mailbox, two decimals; 0 without mailboxes. */
export function perMailbox(humanClicks: number, mailboxes: number): number {
  return mailboxes ? Math.round((humanClicks / mailboxes) * 100) / 100 : 0;
}

/** The tracking modes a report is read under (src/db/workspaces.ts privacySettings; docs/privacy.md). */
export interface TrackedModes {
  views_tracking: TrackingMode;
  clicks_tracking: TrackingMode;
}

const UNIQUE_VIEWS = ['unique_views', 'unique_direct_views'] as const;
const VIEW_FIGURES = ['views', 'direct_views', 'proxied_views', 'bot_views', 'scanner_views', 'proxy_views', 'unknown_views', 'all_views', 'ctr'] as const;
const CLICK_FIGURES = [
  'clicks',
  'human_clicks',
  'bot_clicks',
  'scanner_clicks',
  'proxy_clicks',
  'unknown_clicks',
  'all_clicks',
  'clicks_per_mailbox',
  'ctr',
] as const;
/** A figure some mode does not keep. */
export type WithheldFigure = (typeof UNIQUE_VIEWS)[number] | (typeof VIEW_FIGURES)[number] | (typeof CLICK_FIGURES)[number] | 'unique_clickers';
/** A report row whose withheld figures may be null. */
export type Kept<T> = Omit<T, WithheldFigure> & { [K in keyof T & WithheldFigure]: T[K] | null };

/**
 * The figures the workspace's modes do not keep, by name: the unique counts of views or clicks not
 * kept per person (no key outlives the repeat window), and every figure of views or clicks that are
 * `off`. Reports answer them as null.
 */
export function withheldFigures(m: TrackedModes): ReadonlySet<WithheldFigure> {
  const out = new Set<WithheldFigure>();
  if (m.views_tracking !== 'per_person') for (const f of UNIQUE_VIEWS) out.add(f);
  if (m.views_tracking === 'off') for (const f of VIEW_FIGURES) out.add(f);
  if (m.clicks_tracking !== 'per_person') out.add('unique_clickers');
  if (m.clicks_tracking === 'off') for (const f of CLICK_FIGURES) out.add(f);
  return out;
}

/** `row` with the withheld figures null (a copy). */
export function keptOnly<T extends object>(row: T, withheld: ReadonlySet<WithheldFigure>): Kept<T> {
  if (!withheld.size) return row;
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, withheld.has(k as WithheldFigure) ? null : v])) as Kept<T>;
}
