/**
 * Rollups: owner of `analytics_rollups` and `analytics_rollup_values`, the tables every report reads.
 *
 * `rebuildRollups` recomputes every bucket from a day on (by default the current UTC day, and the
 * previous one during the first minutes after midnight) from the raw rows, in one transaction:
 * readers see the old rollups or the new ones, never half. The worker runs it every minute
 * (task `analytics_rollup`), so reports lag raw clicks and events by about a minute. Days before
 * `since` are never touched: once retention removes old raw rows, their rollups stay.
 *
 * Per bucket (UTC day; UTC hour too for the totals and the anchors) and key of each dimension
 * (`total`, `signature`, `campaign`, `teammate`, `country`, `anchor`): clicks, human clicks, bot
 * clicks, unique human clickers (distinct keyed hashes of address and user agent in the bucket),
 * new visitors (by their first touch), recorded events, conversions (click-attributed events with a
 * value), and the conversion value per currency. Views (fetches of tracked images, views.ts) count
 * on every dimension but `anchor`: views, proxied views, bot views, unique views (distinct viewer
 * hashes among all fetches) and unique direct views (among fetches neither proxied nor a bot's).
 * Repeats (the same client again within 30 minutes) count nowhere, and bursts and rotations count as
 * bots' (below). A row whose key was removed (docs/privacy.md: aggregate mode, an opt-out) is a
 * repeat when it was marked one before (`is_repeat`), and is in no burst or rotation.
 */
import type pg from 'pg';
import { withTx } from '../db/tx.ts';

/** Rows of one raw source spread over every (grain, bucket, dimension, key) they count in. */
function spread(source: string, time: string): string {
  return `select s.*, g.grain, date_trunc(g.grain, s.${time}, 'UTC') as bucket, d.dimension, d.key
    from ${source} s
    cross join (values ('day'), ('hour')) as g(grain)
    cross join lateral (values ('total', ''), ('signature', s.signature_id::text), ('campaign', s.campaign_id::text), ('teammate', s.teammate_id::text),
                               ('country', s.country_code), ('anchor', s.anchor_id::text)) as d(dimension, key)
   where d.key is not null and (g.grain = 'day' or d.dimension in ('total', 'anchor'))`;
}

/**
 * Repeats are not people (docs/analytics.md, "Repeats"). Over the raw rows, kept as they came:
 * - a **repeat** is a click (a fetch) by the same client (keyed hash of address and user agent) of
 *   the same link (image) within REPEAT_WINDOW of that client's previous one there: it counts
 *   nowhere but the raw table. Proxied views are never repeats (a proxy fetches for many readers).
 * - a **burst** is more than CLICK_BURST clicks (VIEW_BURST fetches) by one client of one link
 *   (image) in one clock hour: every one of them is a bot's (`automated`).
 * - a **rotation**: of the clients (user agents) of one client address that follow one link in one
 *   UTC day, the first ADDRESS_CLIENTS count as people; the clicks of every later one are a bot's.
 *   Changing the user agent is free, so it must not make another person; an office behind one
 *   address keeps its first few colleagues on each link, each day.
 * The rows are read from REPEAT_WINDOW before the first day rebuilt, so that a repeat just after
 * midnight is known.
 */
export const REPEAT_WINDOW = '30 minutes';
export const CLICK_BURST = 10;
export const VIEW_BURST = 60;
export const ADDRESS_CLIENTS = 5;

/** Each raw click with its address (rows older than `clicker_address` use `clicker`) and the first time its client, bot or not, followed its link that day. */
const CLICKS_OF_DAYS = `(select c.*, a.address, date_trunc('day', clicked_at, 'UTC') as day,
                                min(clicked_at) over (partition by workspace_id, a.address, link_id, date_trunc('day', clicked_at, 'UTC'), clicker, is_bot) as client_first
                           from clicks c cross join lateral (select coalesce(c.clicker_address, c.clicker) as address) a
                          where clicked_at >= $1::timestamptz - interval '${REPEAT_WINDOW}' and ($2::uuid is null or workspace_id = $2))`;

/** A click's class (classify.ts) once bursts and rotations are known: a person's or an unknown client's burst is a scanner's. */
const CLICKS = `(select workspace_id, clicked_at, is_bot or burst or rotated as is_bot, repeat,
                        case when (burst or rotated) and traffic_class in ('human', 'unknown') then 'scanner' else traffic_class end as cls, clicker, signature_id, campaign_id, teammate_id, country_code, anchor_id
                   from (select c.*, is_repeat or (clicker is not null and coalesce(clicked_at - lag(clicked_at) over same < interval '${REPEAT_WINDOW}', false)) as repeat,
                                clicker is not null and count(*) over (partition by workspace_id, clicker, link_id, date_trunc('hour', clicked_at, 'UTC')) > ${CLICK_BURST} as burst,
                                not is_bot and address is not null and dense_rank() over (partition by workspace_id, address, link_id, day, is_bot order by client_first, clicker) > ${ADDRESS_CLIENTS} as rotated
                           from ${CLICKS_OF_DAYS} c
                         window same as (partition by workspace_id, clicker, link_id order by clicked_at, id)) r
                  where clicked_at >= $1 and not repeat)`;
const EVENTS = `(select workspace_id, recorded_at, value, currency, link_id, signature_id, campaign_id, teammate_id, country_code, anchor_id from recorded_events
                 where recorded_at >= $1 and ($2::uuid is null or workspace_id = $2))`;
const VISITORS = `(select v.workspace_id, v.first_seen_at, l.signature_id, case when a.source_kind = 'campaign' then a.source_id end as campaign_id, l.teammate_id,
                          coalesce(c.country_code, '') as country_code, l.anchor_id
                     from visitors v left join anchor_links l on l.id = v.first_link_id left join anchors a on a.id = l.anchor_id left join clicks c on c.id = v.first_click_id
                    where v.first_seen_at >= $1 and ($2::uuid is null or v.workspace_id = $2))`;

const VIEWS = `(select workspace_id, viewed_at, is_proxied, is_bot or burst as is_bot, viewer,
                        case when burst and traffic_class in ('human', 'unknown') then 'scanner' else traffic_class end as cls, signature_id, campaign_id, teammate_id, country_code, null::uuid as anchor_id
                  from (select v.*, is_repeat or (viewer is not null and not is_proxied and coalesce(viewed_at - lag(viewed_at) over same < interval '${REPEAT_WINDOW}', false)) as repeat,
                               viewer is not null and not is_proxied and count(*) over (partition by workspace_id, viewer, image_id, is_proxied, date_trunc('hour', viewed_at, 'UTC')) > ${VIEW_BURST} as burst
                          from views v where viewed_at >= $1::timestamptz - interval '${REPEAT_WINDOW}' and ($2::uuid is null or workspace_id = $2)
                        window same as (partition by workspace_id, viewer, image_id, is_proxied order by viewed_at, id)) r
                 where viewed_at >= $1 and not repeat)`;

const KEYS = 'workspace_id, grain, bucket, dimension, key';
const COUNTS =
  'clicks, human_clicks, bot_clicks, scanner_clicks, proxy_clicks, unknown_clicks, unique_clickers, visitors, events, conversions, ' +
  'views, proxied_views, bot_views, unique_views, unique_direct_views, human_views, scanner_views, proxy_views, unknown_views, unique_human_views';
const NO_CLICKS = '0, 0, 0, 0, 0, 0, 0';
const NO_VIEWS =
  '0 as views, 0 as proxied_views, 0 as bot_views, 0 as unique_views, 0 as unique_direct_views, 0 as human_views, 0 as scanner_views, 0 as proxy_views, 0 as unknown_views, 0 as unique_human_views';
/** Rows of one class (`cls`, classify.ts). */
const of = (c: string) => `count(*) filter (where cls = '${c}')`;

/** The first day rebuilt when none is given: today (UTC), or yesterday within 10 minutes of midnight. */
export function defaultSince(now = new Date()): Date {
  const d = new Date(now.getTime() - 10 * 60_000);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

export interface RebuildResult {
  since: Date;
  rows: number;
}

/** Recomputes every rollup bucket from `since` (a UTC day start) on, for one workspace or all. */
export async function rebuildRollups(pool: pg.Pool, opts: { since?: Date; workspaceId?: string } = {}): Promise<RebuildResult> {
  const since = opts.since ?? defaultSince();
  const params = [since, opts.workspaceId ?? null];
  return withTx(pool, async (c) => {
    await c.query(`select pg_advisory_xact_lock(hashtext('analytics_rollups'))`);
    await c.query('delete from analytics_rollups where bucket >= $1 and ($2::uuid is null or workspace_id = $2)', params);
    await c.query('delete from analytics_rollup_values where bucket >= $1 and ($2::uuid is null or workspace_id = $2)', params);
    const { rowCount } = await c.query(
      `insert into analytics_rollups (${KEYS}, ${COUNTS})
       select ${KEYS}, ${COUNTS.split(', ')
         .map((n) => `sum(${n})`)
         .join(', ')}
         from (
           select ${KEYS}, count(*) as clicks, ${of('human')} as human_clicks, count(*) filter (where cls in ('scanner', 'proxy')) as bot_clicks,
                  ${of('scanner')} as scanner_clicks, ${of('proxy')} as proxy_clicks, ${of('unknown')} as unknown_clicks,
                  count(distinct clicker) filter (where cls = 'human') as unique_clickers, 0 as visitors, 0 as events, 0 as conversions, ${NO_VIEWS}
             from (${spread(CLICKS, 'clicked_at')}) x group by ${KEYS}
           union all
           select ${KEYS}, ${NO_CLICKS}, 0, count(*), count(*) filter (where value is not null and link_id is not null), ${NO_VIEWS}
             from (${spread(EVENTS, 'recorded_at')}) x group by ${KEYS}
           union all
           select ${KEYS}, ${NO_CLICKS}, count(*), 0, 0, ${NO_VIEWS}
             from (${spread(VISITORS, 'first_seen_at')}) x group by ${KEYS}
           union all
           select ${KEYS}, ${NO_CLICKS}, 0, 0, 0, count(*), ${of('proxy')}, ${of('scanner')}, count(distinct viewer),
                  count(distinct viewer) filter (where cls = 'human'), ${of('human')}, ${of('scanner')}, ${of('proxy')}, ${of('unknown')},
                  count(distinct viewer) filter (where cls = 'human')
             from (${spread(VIEWS, 'viewed_at')}) x group by ${KEYS}
         ) parts
        group by ${KEYS}`,
      params,
    );
    await c.query(
      `insert into analytics_rollup_values (${KEYS}, currency, conversions, value)
       select ${KEYS}, currency, count(*), sum(value) from (${spread(EVENTS, 'recorded_at')}) x
        where value is not null and link_id is not null group by ${KEYS}, currency`,
      params,
    );
    return { since, rows: rowCount ?? 0 };
  });
}
