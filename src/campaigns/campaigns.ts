/**
 * Marketing campaign states (spec 3 "Marketing campaign status") and the 30-minute tick.
 *
 *   draft ──schedule──> scheduled ──start reached (tick)──> active        campaign.scheduled / campaign.started
 *   draft ──schedule, start already due──> active                         campaign.scheduled + campaign.started
 *   active ──pause──> paused ──resume──> active                           campaign.paused / campaign.resumed
 *   active | paused ──end reached (tick)──> archived                      campaign.ended
 *
 * Which state accepts which user action (the spec leaves it open): schedule from draft only, pause
 * from active only, resume from paused only (`ACCEPTS`). Every move is one conditional UPDATE
 * (`... where status = <from>`), so two workers or two requests racing move a campaign once, and each
 * move writes its event in the same transaction. Events carry the state after the move: when
 * scheduling finds the start already due the campaign goes straight to active, and both
 * campaign.scheduled and campaign.started carry `active`.
 *
 * Banners: a campaign shows on its target signatures while active. Every move into or out of active
 * (start, pause, resume, end of an active campaign) asks the install pipeline to reinstall the
 * targeted signatures that are published: the primary signature, and the variants that show
 * campaigns. A paused campaign reaching its end changes nothing shown, so it only writes its event.
 */
import type pg from 'pg';
import { setClause, withTx, type Queryable } from '../db/tx.ts';
import { emitEvent, type CampaignEventBody } from '../db/outbox.ts';
import type { Utm } from '../domain.ts';
import { requestSignatureInstall } from '../jobs/triggers.ts';
import { bannerKinds } from '../signatures/queries.ts';

export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'active', 'paused', 'archived'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];
export type CampaignAction = 'schedule' | 'pause' | 'resume';

/** The states each user action is accepted from; any other state gets 422 with this list as `allowed`. */
export const ACCEPTS: Record<CampaignAction, readonly CampaignStatus[]> = {
  schedule: ['draft'],
  pause: ['active'],
  resume: ['paused'],
};

/** States whose campaign can still be edited; an archived campaign is final. */
export const EDITABLE: readonly CampaignStatus[] = ['draft', 'scheduled', 'active', 'paused'];

export interface CampaignCondition {
  smart_field_id: string;
  operator: 'equal';
  values: string[];
}

export interface CampaignRow {
  id: string;
  workspace_id: string;
  name: string;
  status: CampaignStatus;
  behaviour: string;
  filter_kind: string;
  send_email: boolean;
  content: Record<string, unknown> | null;
  smart_fields_conditions: CampaignCondition[][];
  signature_template_ids: string[];
  utm: Utm | null;
  start_time: Date | null;
  end_time: Date | null;
  time_zone: string;
  created_at: Date;
  updated_at: Date;
}

export function campaignPayload(c: CampaignRow): CampaignEventBody {
  return {
    campaign: {
      uuid: c.id,
      name: c.name,
      status: c.status,
      start_time: c.start_time ? c.start_time.toISOString() : null,
      end_time: c.end_time ? c.end_time.toISOString() : null,
      time_zone: c.time_zone,
      signature_template_uuids: c.signature_template_ids,
    },
  };
}

/**
 * Reinstalls the published signatures among `signatureIds`: the primary kind and the variants that
 * show campaigns. Unchanged renders are skipped by the pipeline (forced: false).
 */
export async function requestBannerInstalls(db: Queryable, workspaceId: string, signatureIds: readonly string[]): Promise<void> {
  if (!signatureIds.length) return;
  for (const s of await bannerKinds(db, workspaceId, [...new Set(signatureIds)]))
    await requestSignatureInstall(db, workspaceId, s.id, { kinds: ['primary', ...s.variant_kinds], forced: false });
}

/** A campaign's stored fields; undefined leaves a column as it is (on create: its default). */
export interface CampaignWrite {
  name?: string;
  /** Create only, for seeded data; a campaign otherwise starts as a draft and moves by actions. */
  status?: CampaignStatus;
  startTime?: Date | null;
  endTime?: Date | null;
  timeZone?: string;
  sendEmail?: boolean;
  content?: unknown;
  conditions?: CampaignCondition[][];
  signatureIds?: string[];
  /** UTM parameters for the banner's web links (src/render/utm.ts); null removes them. */
  utm?: Utm | null;
}

export async function createCampaign(db: Queryable, workspaceId: string, w: CampaignWrite & { name: string }): Promise<CampaignRow> {
  const { rows } = await db.query<CampaignRow>(
    `insert into marketing_campaigns (workspace_id, name, status, start_time, end_time, time_zone, send_email, content, smart_fields_conditions, signature_template_ids, utm)
     values ($1, $2, coalesce($3, 'draft'), $4, $5, coalesce($6, 'UTC'), coalesce($7, false), $8, coalesce($9::jsonb, '[]'::jsonb), coalesce($10::uuid[], '{}'), $11::jsonb)
     returning *`,
    [
      workspaceId,
      w.name,
      w.status ?? null,
      w.startTime ?? null,
      w.endTime ?? null,
      w.timeZone ?? null,
      w.sendEmail ?? null,
      w.content ?? null,
      w.conditions ? JSON.stringify(w.conditions) : null,
      w.signatureIds ?? null,
      w.utm ? JSON.stringify(w.utm) : null,
    ],
  );
  return rows[0]!;
}

/**
 * Writes the given fields of a campaign locked by the caller (`cur`, read `for update`). While it is
 * active, a change to what it shows or where reinstalls the signatures it left and the ones it reaches.
 */
export async function updateCampaign(db: Queryable, cur: CampaignRow, w: Omit<CampaignWrite, 'status'>): Promise<CampaignRow> {
  const set = setClause(
    [
      ['name', w.name],
      ['start_time', w.startTime],
      ['end_time', w.endTime],
      ['time_zone', w.timeZone],
      ['send_email', w.sendEmail],
      ['content', w.content],
      ['smart_fields_conditions::jsonb', w.conditions && JSON.stringify(w.conditions)],
      ['signature_template_ids::uuid[]', w.signatureIds],
      ['utm::jsonb', w.utm === undefined ? undefined : w.utm && JSON.stringify(w.utm)],
    ],
    3,
  );
  if (!set.sql) return cur;
  const { rows } = await db.query<CampaignRow>(`update marketing_campaigns set ${set.sql} where workspace_id = $1 and id = $2 returning *`, [
    cur.workspace_id,
    cur.id,
    ...set.values,
  ]);
  const next = rows[0]!;
  if (cur.status === 'active' && (w.content !== undefined || w.conditions || w.signatureIds || w.utm !== undefined)) {
    await requestBannerInstalls(db, cur.workspace_id, [...cur.signature_template_ids, ...next.signature_template_ids]);
  }
  return next;
}

const MOVES: Record<CampaignAction, { from: CampaignStatus; set: string }> = {
  schedule: { from: 'draft', set: `case when start_time <= $3 then 'active' else 'scheduled' end` },
  pause: { from: 'active', set: `'paused'` },
  resume: { from: 'paused', set: `'active'` },
};

/**
 * Applies a user action as one conditional UPDATE with its events and installs, in the caller's
 * transaction. Answers the moved campaign, or undefined when the campaign was not in the state the
 * action needs (callers check the state first and report it; this covers a concurrent move).
 */
export async function applyAction(db: Queryable, workspaceId: string, id: string, action: CampaignAction, now: Date): Promise<CampaignRow | undefined> {
  const move = MOVES[action];
  const { rows } = await db.query<CampaignRow>(
    `update marketing_campaigns set status = ${move.set}
      where workspace_id = $1 and id = $2 and status = '${move.from}' returning *`,
    action === 'schedule' ? [workspaceId, id, now] : [workspaceId, id],
  );
  const c = rows[0];
  if (!c) return undefined;
  const payload = campaignPayload(c);
  if (action === 'schedule') {
    await emitEvent(db, workspaceId, 'campaign.scheduled', payload, now);
    if (c.status === 'active') await emitEvent(db, workspaceId, 'campaign.started', payload, now);
  } else {
    await emitEvent(db, workspaceId, action === 'pause' ? 'campaign.paused' : 'campaign.resumed', payload, now);
  }
  if (c.status === 'active' || action === 'pause') await requestBannerInstalls(db, workspaceId, c.signature_template_ids);
  return c;
}

export interface TickResult {
  workspaces: number;
  started: number;
  ended: number;
}

/**
 * One pass of the scheduler at time `now`: scheduled campaigns whose start is reached go active
 * (campaign.started), then live campaigns whose end is reached are archived (campaign.ended). A
 * campaign whose whole window passed while no tick ran (a missed tick being caught up) takes both
 * moves in the same pass. One transaction per workspace; each UPDATE is conditional on the state,
 * so concurrent ticks move every campaign exactly once.
 */
export async function runCampaignTick(pool: pg.Pool, now: Date): Promise<TickResult> {
  // The one query across workspaces: which workspaces have a campaign due. Everything after it is
  // scoped to one workspace.
  const { rows: due } = await pool.query<{ workspace_id: string }>(
    `select distinct workspace_id from marketing_campaigns
      where status in ('scheduled', 'active', 'paused')
        and ((status = 'scheduled' and start_time <= $1) or (status in ('active', 'paused') and end_time <= $1))`,
    [now],
  );
  const result: TickResult = { workspaces: due.length, started: 0, ended: 0 };
  for (const { workspace_id: ws } of due) {
    await withTx(pool, async (c) => {
      const banners = new Set<string>();
      const started = await c.query<CampaignRow>(
        `update marketing_campaigns set status = 'active'
          where workspace_id = $1 and status = 'scheduled' and start_time <= $2 returning *`,
        [ws, now],
      );
      for (const row of started.rows) {
        await emitEvent(c, ws, 'campaign.started', campaignPayload(row));
        row.signature_template_ids.forEach((s) => banners.add(s));
      }
      const ended = await c.query<CampaignRow & { was: CampaignStatus }>(
        `with due as (
           select id, status from marketing_campaigns
            where workspace_id = $1 and status in ('active', 'paused') and end_time <= $2 for update)
         update marketing_campaigns m set status = 'archived' from due
          where m.workspace_id = $1 and m.id = due.id and m.status in ('active', 'paused')
         returning m.*, due.status as was`,
        [ws, now],
      );
      for (const row of ended.rows) {
        const { was, ...campaign } = row;
        await emitEvent(c, ws, 'campaign.ended', campaignPayload(campaign));
        if (was === 'active') row.signature_template_ids.forEach((s) => banners.add(s));
      }
      await requestBannerInstalls(c, ws, [...banners]);
      result.started += started.rowCount ?? 0;
      result.ended += ended.rowCount ?? 0;
    });
  }
  return result;
}
