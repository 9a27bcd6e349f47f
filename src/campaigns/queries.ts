/** Reads of the campaign aggregate for the API (src/campaigns/campaigns.ts writes it). */
import type { Queryable } from '../db/tx.ts';
import { listPage, type PageWindow } from '../db/pages.ts';
import type { CampaignRow } from './campaigns.ts';
import { LIVE_ORDER } from './choice.ts';

/** A campaign of the workspace; `lock` locks it for a write in the caller's transaction. */
export async function getCampaign(db: Queryable, workspaceId: string, id: string, lock = false): Promise<CampaignRow | undefined> {
  const { rows } = await db.query<CampaignRow>(`select * from marketing_campaigns where workspace_id = $1 and id = $2${lock ? ' for update' : ''}`, [
    workspaceId,
    id,
  ]);
  return rows[0];
}

export function listCampaigns(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: CampaignRow[]; total: number }> {
  return listPage<CampaignRow>(db, workspaceId, page, '*', 'from marketing_campaigns where workspace_id = $1');
}

/** The live campaign's fields a compatibility report shows as the banner. */
export interface LiveBanner {
  id: string;
  name: string;
  content: unknown;
  utm: CampaignRow['utm'];
  smart_fields_conditions: CampaignRow['smart_fields_conditions'];
}

/** The first `active` campaign naming the signature, with a banner, in the documented order (choice.ts LIVE_ORDER), whatever its conditions. */
export async function firstLiveBanner(db: Queryable, workspaceId: string, signatureId: string): Promise<LiveBanner | undefined> {
  const { rows } = await db.query<LiveBanner>(
    `select c.id, c.name, c.content, c.utm, c.smart_fields_conditions from marketing_campaigns c
      where c.workspace_id = $1 and c.status = 'active' and $2::uuid = any(c.signature_template_ids) and c.content is not null
      order by ${LIVE_ORDER} limit 1`,
    [workspaceId, signatureId],
  );
  return rows[0];
}

/** A past campaign as the experiments' prior reads it (src/analytics/experiments.ts). */
export interface PastCampaign {
  id: string;
  end_time: Date | null;
  status: string;
  updated_at: Date;
  created_at: Date;
}

/** The workspace's `limit` latest campaigns created before `before`, but `exceptId`; newest first. */
export async function pastCampaigns(db: Queryable, workspaceId: string, exceptId: string, before: Date, limit: number): Promise<PastCampaign[]> {
  const { rows } = await db.query<PastCampaign>(
    `select id, end_time, status, updated_at, created_at from marketing_campaigns
      where workspace_id = $1 and id <> $2 and created_at < $3 order by created_at desc limit $4`,
    [workspaceId, exceptId, before, limit],
  );
  return rows;
}
