/**
 * What an experiment's analysis reads of the analytics tables (docs/experiments.md, "Exposures"):
 * per arm, per sender (the teammate whose signature showed it), the human clicks and the exposures
 * since the experiment started, and the workspace's earlier banners for the prior.
 *
 * - clicks: clicks of class `human` on the arm's links (anchors carry the arm, links.ts); with
 *   sender-days, the sender-days that had such a click;
 * - exposures, when the workspace keeps views per person (`views_tracking = per_person`): views of
 *   class `human` of the arm's tracked image (view_images carry the arm, viewImages.ts);
 * - exposures otherwise: sender-days of the arm installed. A sender's arm counts from the first
 *   render of it into that sender's installed signature (the render creates the arm's tracked
 *   image) until the experiment's end (its conclusion, or now), each started day one exposure.
 *
 * A sender's exposures are at least its clicks (a click shows the banner was seen, image blocked or not).
 * The window is [started_at, concluded_at or now). Reads only; the tables' owners are links.ts,
 * viewImages.ts, clicks.ts and views.ts.
 */
import type { Queryable } from '../db/tx.ts';
import { trackingState } from '../db/workspaces.ts';
import { pastCampaigns } from '../campaigns/queries.ts';
import { analyse, type Analysis, type ArmInput, type PastBanner, type SenderCounts } from '../experiments/analysis.ts';
import { policyOf, type ArmRow, type ExperimentRow } from '../experiments/experiments.ts';

/** How many earlier campaigns the prior is fitted from, newest first. */
export const PAST_BANNERS = 50;

export type ExposureKind = 'human_views' | 'sender_days';

export interface ExperimentCounts {
  exposure: ExposureKind;
  arms: ArmInput[];
  past: PastBanner[];
}

const DAY_SECONDS = 86_400;

/** Each sender's first render of an arm into an installed signature (its tracked image), in the window's end. */
const FIRST_RENDERS = `select i.arm_id, i.teammate_id as sender, min(i.created_at) as first
                         from view_images i where i.workspace_id = $1 and i.arm_id = any($2::uuid[]) and i.created_at < $4
                        group by 1, 2`;

/**
 * Human clicks per arm and sender in the window. With sender-days, a click counts as the sender-day it
 * fell on (at most one each), so that the rate stays a proportion: the share of sender-days with a click.
 */
async function clicksBy(db: Queryable, workspaceId: string, kind: ExposureKind, armIds: string[], from: Date, until: Date) {
  const counted =
    kind === 'human_views' ? 'count(*)' : `count(distinct floor(extract(epoch from (c.clicked_at - greatest(f.first, $3::timestamptz))) / ${DAY_SECONDS}))`;
  const firsts = kind === 'human_views' ? '' : `join (${FIRST_RENDERS}) f on f.arm_id = a.arm_id and f.sender = c.teammate_id and c.clicked_at >= f.first`;
  const { rows } = await db.query<{ arm_id: string; sender: string; n: number }>(
    `select a.arm_id, c.teammate_id as sender, ${counted}::int as n
       from anchors a join clicks c on c.workspace_id = a.workspace_id and c.anchor_id = a.id ${firsts}
      where a.workspace_id = $1 and a.arm_id = any($2::uuid[]) and c.traffic_class = 'human' and c.clicked_at >= $3 and c.clicked_at < $4
      group by 1, 2`,
    [workspaceId, armIds, from, until],
  );
  return rows;
}

/** Exposures per arm and sender in the window, as the workspace's views mode decides. */
async function exposuresBy(db: Queryable, workspaceId: string, kind: ExposureKind, armIds: string[], from: Date, until: Date) {
  const sql =
    kind === 'human_views'
      ? `select i.arm_id, i.teammate_id as sender, count(v.id)::int as n
           from view_images i left join views v on v.workspace_id = i.workspace_id and v.image_id = i.id
                                               and v.traffic_class = 'human' and v.viewed_at >= $3 and v.viewed_at < $4
          where i.workspace_id = $1 and i.arm_id = any($2::uuid[]) and i.created_at < $4
          group by 1, 2`
      : `select arm_id, sender, ceil(greatest(0, extract(epoch from ($4::timestamptz - greatest(first, $3::timestamptz)))) / ${DAY_SECONDS})::int as n
           from (${FIRST_RENDERS}) s`;
  const { rows } = await db.query<{ arm_id: string; sender: string; n: number }>(sql, [workspaceId, armIds, from, until]);
  return rows;
}

/** The workspace's earlier campaigns' banners (not this experiment's campaign): human clicks and exposures each. */
async function pastBanners(db: Queryable, workspaceId: string, kind: ExposureKind, campaignId: string, until: Date): Promise<PastBanner[]> {
  // Counted as this experiment's arms are: human views and human clicks, or sender-days from each
  // sender's first install render to the campaign's end (its end time, the time it was archived, or now)
  // and the sender-days with a human click. Every banner the campaign showed counts, its arms' too.
  // Each table is read once for all the past campaigns (grouped by campaign), not once per campaign.
  const exposures =
    kind === 'human_views'
      ? `select v.campaign_id, count(*) as n from views v
          where v.workspace_id = $1 and v.campaign_id in (select id from past) and v.traffic_class = 'human' and v.viewed_at < $3 group by 1`
      : `select s.campaign_id, sum(ceil(greatest(0, extract(epoch from (least(coalesce(p.end_time, case when p.status = 'archived' then p.updated_at end, $3), $3) - s.first))) / ${DAY_SECONDS})) as n
           from (select i.campaign_id, min(i.created_at) as first from view_images i
                  where i.workspace_id = $1 and i.campaign_id in (select id from past) group by i.campaign_id, i.teammate_id) s
           join past p on p.id = s.campaign_id group by 1`;
  const clicked = kind === 'human_views' ? 'count(*)' : `count(distinct (k.teammate_id, floor(extract(epoch from k.clicked_at) / ${DAY_SECONDS})))`;
  const campaigns = await pastCampaigns(db, workspaceId, campaignId, until, PAST_BANNERS);
  if (!campaigns.length) return [];
  const col = <K extends keyof (typeof campaigns)[number]>(k: K) => campaigns.map((c) => c[k]);
  const { rows } = await db.query<PastBanner>(
    `with past as (select * from unnest($2::uuid[], $4::timestamptz[], $5::text[], $6::timestamptz[], $7::timestamptz[]) with ordinality as p(id, end_time, status, updated_at, created_at, n)),
          exposed as (${exposures}),
          clicked as (select k.campaign_id, ${clicked} as n from clicks k
                       where k.workspace_id = $1 and k.campaign_id in (select id from past) and k.traffic_class = 'human' and k.clicked_at < $3 group by 1)
     select e.n::int as exposures, coalesce(c.n, 0)::int as clicks
       from past p join exposed e on e.campaign_id = p.id left join clicked c on c.campaign_id = p.id
      where e.n > 0 order by p.n`,
    [workspaceId, col('id'), until, col('end_time'), col('status'), col('updated_at'), col('created_at')],
  );
  return rows.map((r) => ({ exposures: r.exposures, clicks: Math.min(r.clicks, r.exposures) }));
}

/** The end of an experiment's window: its conclusion, or `now`. */
export function windowEnd(e: ExperimentRow, now: Date): Date {
  return e.concluded_at ?? now;
}

/** What one exposure is in the workspace now: a person's view where views are kept per person, else a sender-day. */
export async function exposureKind(db: Queryable, workspaceId: string): Promise<ExposureKind> {
  return (await trackingState(db, workspaceId))?.views === 'per_person' ? 'human_views' : 'sender_days';
}

/** The counts an experiment is analysed on; arms in their stable order, senders sorted. */
export async function experimentCounts(db: Queryable, e: ExperimentRow, arms: readonly ArmRow[], now: Date): Promise<ExperimentCounts> {
  const exposure = await exposureKind(db, e.workspace_id);
  const until = windowEnd(e, now);
  const from = e.started_at ?? until;
  const ids = arms.map((a) => a.id);
  // One after another: the caller's transaction is one connection, which runs one query at a time.
  const clicks = await clicksBy(db, e.workspace_id, exposure, ids, from, until);
  const exposures = await exposuresBy(db, e.workspace_id, exposure, ids, from, until);
  const past = await pastBanners(db, e.workspace_id, exposure, e.campaign_id, until);
  const bySender = new Map(arms.map((a) => [a.id, new Map<string, SenderCounts>()]));
  const cell = (arm: string, sender: string) => {
    const m = bySender.get(arm)!;
    if (!m.has(sender)) m.set(sender, { sender, exposures: 0, clicks: 0 });
    return m.get(sender)!;
  };
  for (const r of exposures) cell(r.arm_id, r.sender).exposures += r.n;
  for (const r of clicks) cell(r.arm_id, r.sender).clicks += r.n;
  // A click shows its banner was seen: a reader whose mail client blocked the tracked image still saw
  // it, so a sender's exposures are at least its clicks (the rate stays a proportion).
  for (const m of bySender.values()) for (const c of m.values()) c.exposures = Math.max(c.exposures, c.clicks);
  return {
    exposure,
    arms: arms.map((a) => ({
      id: a.id,
      name: a.name,
      weight: a.weight,
      senders: [...bySender.get(a.id)!.values()].sort((x, y) => (x.sender < y.sender ? -1 : 1)),
    })),
    past,
  };
}

/** The experiment's analysis now: its counts through `analyse` with its policy and mode. */
export async function experimentResults(
  db: Queryable,
  e: ExperimentRow,
  arms: readonly ArmRow[],
  now: Date,
): Promise<{ counts: ExperimentCounts; analysis: Analysis }> {
  const counts = await experimentCounts(db, e, arms, now);
  return { counts, analysis: analyse({ arms: counts.arms, past: counts.past, policy: policyOf(e), mode: e.mode }) };
}
