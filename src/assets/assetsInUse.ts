/**
 * Read model: the workspace's assets with where each one is in use, in one statement per page
 * (GET /v1/assets, the console, and the check before a delete). It joins the asset aggregate
 * (`assets`, `teammate_photos`) with the trees that show an asset through an `assetUuid` token:
 * `signatures`, `signature_variants`, `marketing_campaigns` and `experiment_arms`; it writes nothing
 * (src/assets/assets.ts writes assets; docs/architecture.md "Read models").
 */
import type { Queryable } from '../db/tx.ts';

export type AssetRole = 'company_logo' | 'profile_photo' | 'banner' | 'image';
export type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

export interface AssetRow {
  id: string;
  name: string;
  role: AssetRole;
  in_use: boolean;
  signature_template_count: number;
  filename: string | null;
  content_type: ImageType;
  byte_size: number;
  public_token: string;
  created_at: Date;
  updated_at: Date;
}

const SHOWS = (tree: string) => `jsonb_path_exists(${tree}, '$.** ? (@.assetUuid == $id)', jsonb_build_object('id', a.id::text))`;
const SIGNATURES = `(select count(*)::int from signatures s where s.workspace_id = a.workspace_id and (${SHOWS('s.draft_content')} or ${SHOWS('s.content')}
   or exists (select 1 from signature_variants v where v.workspace_id = s.workspace_id and v.signature_id = s.id and (${SHOWS('v.draft_content')} or ${SHOWS('v.content')}))))`;
// A banner of a campaign or of an experiment's arm (shown while the experiment runs, promoted after).
const CAMPAIGNS = `(exists (select 1 from marketing_campaigns c where c.workspace_id = a.workspace_id and ${SHOWS('c.content')})
   or exists (select 1 from experiment_arms x where x.workspace_id = a.workspace_id and ${SHOWS('x.content')}))`;
const PHOTOS = 'exists (select 1 from teammate_photos p where p.workspace_id = a.workspace_id and p.asset_id = a.id)';
/** The derived columns (module comment), over `assets a`. */
const DERIVED = `select a.id, a.name, a.filename, a.content_type, a.byte_size, a.public_token, a.created_at, a.updated_at,
    d.signature_template_count, (d.signature_template_count > 0 or d.campaigns or d.photos) as in_use,
    case when a.role = 'profile_photo' or d.photos then 'profile_photo' when d.signature_template_count > 0 then 'company_logo'
         when d.campaigns then 'banner' else a.role end as role
  from assets a cross join lateral (select ${SIGNATURES} as signature_template_count, ${CAMPAIGNS} as campaigns, ${PHOTOS} as photos) d`;

export async function getAsset(db: Queryable, workspaceId: string, id: string): Promise<AssetRow | undefined> {
  const { rows } = await db.query<AssetRow>(`${DERIVED} where a.workspace_id = $1 and a.id = $2`, [workspaceId, id]);
  return rows[0];
}

/** One page of the workspace's assets, newest first. */
export async function listAssets(db: Queryable, workspaceId: string, limit: number, offset: number): Promise<{ rows: AssetRow[]; total: number }> {
  const count = await db.query<{ n: number }>('select count(*)::int as n from assets where workspace_id = $1', [workspaceId]);
  const { rows } = await db.query<AssetRow>(`${DERIVED} where a.workspace_id = $1 order by a.created_at desc, a.id desc limit $2 offset $3`, [
    workspaceId,
    limit,
    offset,
  ]);
  return { rows, total: count.rows[0]?.n ?? 0 };
}
