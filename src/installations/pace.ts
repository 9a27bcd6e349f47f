/**
 * The pace of installs per integration, shared by every worker process through one row of
 * `install_pace` (this module owns the table).
 *
 * The unit is the provider's write request; a call the provider charges less counts for its share
 * (a Gmail sendAs listing: 0.01, the connector's `quotaCostFor`). Before its provider calls, an
 * install reserves its cost with one statement that hands out the next start time and moves the
 * integration's schedule on by cost ÷ rate (a shared schedule, as in GCRA): however many worker
 * processes install for one integration, their requests together keep to one rate.
 *
 * The row is hot (every install of the integration updates it), so the statement commits without
 * waiting for its WAL flush (synchronous_commit off for that statement only): otherwise each
 * reservation would hold the row for a disk flush and the reservations would queue behind each
 * other. A crash can lose the last moves of the schedule, which only costs a few turns' pace.
 *
 * The rate:
 * - With the integration config `quota_per_s` (what the provider allows, where a customer knows it),
 *   the pace starts at 98% of it.
 * - Without, installs are unpaced until the provider's first 429.
 * - A 429 moves the schedule past its Retry-After, so every process pauses together, and sets the
 *   pace to 90% of the requests reserved over the last second: the rate the provider just refused
 *   (the other 429s of the same burst, answered before the pause ends, change nothing; nor does a
 *   429 after fewer than 5 requests in that second). That rate becomes the ceiling (a configured
 *   quota is the ceiling until then, and caps it after): each second without a 429 the pace rises
 *   by 1% (at least one request per second) up to 98% of the ceiling, so that pauses, which cost a
 *   whole Retry-After of throughput, stay rare; without a configured quota it then rises by 0.1%,
 *   so that a quota that was raised is still found.
 */
import type { Queryable } from '../db/tx.ts';

/** Share of the quota (configured, or refused by a 429) that installs keep to. */
export const HEADROOM = 0.98;
const DECREASE = 0.9;
const INCREASE = 0.01;
const MIN_INCREASE_PER_S = 1;
/** Above 98% of the ceiling the pace still rises, slowly, to find a quota that was raised. */
const SLOW_INCREASE = 0.001;
/** A 429 after fewer requests than this over the last second does not change the pace (someone else used the quota). */
const MIN_MEASURE = 5;
/** Requests per second never go below this, whatever the provider says. */
export const MIN_RATE = 0.5;

export interface PaceKey {
  workspaceId: string;
  integrationId: string;
}

export interface Turn {
  /** Milliseconds until the turn starts. */
  waitMs: number;
  /** False when the turn was further away than allowed: nothing was reserved. */
  taken: boolean;
  /** When the turn starts (the database's clock). */
  startsAt: Date;
}

/**
 * Reserves the next turn for `requests` (their quota cost, in write requests), unless it starts
 * more than `maxWaitMs` from now. `quotaPerSecond` (integration config) sets the first pace of a new
 * row. One statement.
 */
export async function reserveTurn(
  db: Queryable,
  key: PaceKey,
  requests: number,
  opts: { maxWaitMs: number; quotaPerSecond?: number | undefined },
): Promise<Turn> {
  const { rows } = await db.query<{ wait_ms: number; taken: boolean; starts_at: Date }>({
    name: 'install_pace_reserve',
    text: `with relaxed as (select set_config('synchronous_commit', 'off', true) as v),
     up as (
       insert into install_pace as p (integration_id, workspace_id, quota_per_s, rate_per_s, ceiling_per_s, next_at, turn_at, window_sent)
       values ($2, $1, $5::float8, $5::float8 * $6::float8, $5::float8, clock_timestamp() + make_interval(secs => coalesce($3::float8 / ($5::float8 * $6::float8), 0)), clock_timestamp(), $3::float8)
       on conflict (integration_id) do update set
         turn_at = greatest(p.next_at, clock_timestamp()),
         next_at = case when p.rate_per_s is null then p.next_at
                        else greatest(p.next_at, clock_timestamp()) + make_interval(secs => $3::float8 / p.rate_per_s) end,
         window_start = case when clock_timestamp() - p.window_start >= interval '1 second' then clock_timestamp() else p.window_start end,
         window_sent = case when clock_timestamp() - p.window_start >= interval '1 second' then $3::float8 else p.window_sent + $3::float8 end,
         prev_window_sent = case when clock_timestamp() - p.window_start >= interval '2 seconds' then 0
                                 when clock_timestamp() - p.window_start >= interval '1 second' then p.window_sent else p.prev_window_sent end,
         quota_per_s = $5::float8,
         ceiling_per_s = case when $5::float8 is distinct from p.quota_per_s then $5::float8 else p.ceiling_per_s end,
         rate_per_s = case when $5::float8 is distinct from p.quota_per_s then $5::float8 * $6::float8
                           when p.rate_per_s is null or clock_timestamp() - p.raised_at < interval '1 second' then p.rate_per_s
                           when p.rate_per_s < p.ceiling_per_s * $6::float8 then least(p.rate_per_s + greatest(p.rate_per_s * $7::float8, $8::float8), p.ceiling_per_s * $6::float8)
                           when $5::float8 is null then p.rate_per_s * (1 + $9::float8)
                           else p.rate_per_s end,
         raised_at = case when clock_timestamp() - p.raised_at >= interval '1 second' then clock_timestamp() else p.raised_at end
       where p.workspace_id = $1 and greatest(p.next_at, clock_timestamp()) <= clock_timestamp() + make_interval(secs => $4::float8 / 1000)
       returning turn_at
     )
     select coalesce((select extract(epoch from turn_at - clock_timestamp()) * 1000 from up),
                     (select extract(epoch from next_at - clock_timestamp()) * 1000 from install_pace where integration_id = $2 and workspace_id = $1),
                     0)::float8 as wait_ms,
            exists (select 1 from up) and (select v from relaxed) is not null as taken,
            coalesce((select turn_at from up), (select greatest(next_at, clock_timestamp()) from install_pace where integration_id = $2 and workspace_id = $1), clock_timestamp()) as starts_at`,
    values: [key.workspaceId, key.integrationId, requests, opts.maxWaitMs, opts.quotaPerSecond ?? null, HEADROOM, INCREASE, MIN_INCREASE_PER_S, SLOW_INCREASE],
  });
  const row = rows[0]!;
  return { waitMs: Math.max(0, row.wait_ms), taken: row.taken, startsAt: row.starts_at };
}

/**
 * The provider answered 429 asking for `retryAfterMs`: the schedule moves past the pause, and the
 * first 429 of a burst sets the pace to 90% of the requests reserved over the last second.
 */
export async function paceRateLimited(db: Queryable, key: PaceKey, retryAfterMs: number): Promise<void> {
  await db.query(
    `with m as (
       select p.integration_id,
              p.paused_until is not null and clock_timestamp() < p.paused_until as same_burst,
              -- Requests reserved over the last second: this window, and the part of the previous one still in it.
              p.window_sent + p.prev_window_sent * greatest(0, 1 - extract(epoch from clock_timestamp() - p.window_start)::float8) as sent
         from install_pace p where p.workspace_id = $1 and p.integration_id = $2
     )
     update install_pace p set
       next_at = greatest(p.next_at, clock_timestamp() + make_interval(secs => $3::float8 / 1000)),
       paused_until = case when m.same_burst then p.paused_until else clock_timestamp() + make_interval(secs => $3::float8 / 1000) end,
       rate_per_s = case when m.same_burst or m.sent < $6 then p.rate_per_s else greatest($5, least(coalesce(p.rate_per_s, 'infinity'), m.sent) * $4) end,
       ceiling_per_s = case when m.same_burst or m.sent < $6 then p.ceiling_per_s else least(m.sent, coalesce(p.quota_per_s, 'infinity')) end,
       raised_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
      from m where p.integration_id = m.integration_id`,
    [key.workspaceId, key.integrationId, retryAfterMs, DECREASE, MIN_RATE, MIN_MEASURE],
  );
}

/** The current pace, for the support commands and tests: requests per second (null when unpaced). */
export async function currentPace(
  db: Queryable,
  key: PaceKey,
): Promise<{ ratePerSecond: number | null; ceilingPerSecond: number | null; pausedUntil: Date | null } | undefined> {
  const { rows } = await db.query<{ rate_per_s: number | null; ceiling_per_s: number | null; paused_until: Date | null }>(
    'select rate_per_s, ceiling_per_s, paused_until from install_pace where workspace_id = $1 and integration_id = $2',
    [key.workspaceId, key.integrationId],
  );
  const r = rows[0];
  return r && { ratePerSecond: r.rate_per_s, ceilingPerSecond: r.ceiling_per_s, pausedUntil: r.paused_until };
}
