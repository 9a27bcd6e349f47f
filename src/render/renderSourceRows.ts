/**
 * What a render reads, in one statement per render (a read model: a fan-out renders for every
 * mailbox, so this stays one round trip): the signature and its workspace's tracking setting
 * (`signatures`, `workspaces`), the variant (`signature_variants`), the teammate by id or by one of
 * its addresses (`teammates`, `emails`), the workspace's smart fields (`smart_fields`), the
 * teammate's values (its `field_values` document), and the signature's active campaigns in the documented
 * order with a running experiment's arms (`marketing_campaigns`, `experiments`, `experiment_arms`).
 * load.ts makes a render source of a row; nothing else reads these rows.
 */
import type { Queryable } from '../db/tx.ts';
import { LIVE_ORDER, type CampaignCondition } from '../campaigns/choice.ts';
import type { SmartFieldKind } from './compile.ts';
import type { Utm } from './utm.ts';
import type { SignatureKind } from '../domain.ts';

export interface SignatureRow {
  id: string;
  workspace_id: string;
  name: string;
  installation_activated: boolean;
  content: unknown;
  draft_content: unknown;
  /** md5 of the published content (null when unpublished): what the compiled template is cached by. */
  content_digest: string | null;
  tracks_links: boolean;
}

export interface VariantRow {
  activated: boolean;
  content: unknown;
  draft_content: unknown;
  /** md5 of the published content (null when unpublished). */
  content_digest: string | null;
  show_marketing_campaigns: boolean;
}

export interface CampaignRow {
  id: string;
  name: string;
  status: string;
  content: unknown;
  signature_template_ids: string[];
  smart_fields_conditions: CampaignCondition[][];
  utm: Utm | null;
  /** md5 of the banner and its UTM parameters: what the compiled banner is cached by. */
  digest: string;
  /** The campaign's running experiment: its arms in their stable order (campaigns/choice.ts). */
  experiment: { id: string; arms: { id: string; weight: number; content: unknown; digest: string }[] } | null;
}

export interface FieldRow {
  id: string;
  slug: string;
  kind: SmartFieldKind;
}

/**
 * Everything a render reads, in one statement (one round trip per render: a fan-out renders for
 * every mailbox): the signature and its workspace's tracking setting, the variant, the teammate
 * (by id, or by one of its addresses), the workspace's smart fields, the teammate's values and the
 * signature's active campaigns in the documented order.
 */
const SIGNATURE_CTE = `
  s as (
    select s.id, s.workspace_id, s.name, s.installation_activated, s.content, s.draft_content, md5(s.content::text) as content_digest,
           w.event_tracking_enabled as tracks_links
      from signatures s join workspaces w on w.id = s.workspace_id
     where s.id = $1 and ($2::uuid is null or s.workspace_id = $2)
  )`;
/** The columns every teammate shares: the signature, its variant ($3), the fields and the campaigns. */
const SHARED_COLUMNS = `
         (select row_to_json(s) from s) as signature,
         (select row_to_json(v) from (
            select v.activated, v.content, v.draft_content, md5(v.content::text) as content_digest, v.show_marketing_campaigns
              from s join signature_variants v on v.workspace_id = s.workspace_id and v.signature_id = s.id where v.kind = $3) v) as variant,
         (select coalesce(json_agg(json_build_object('id', f.id, 'slug', f.slug, 'kind', f.kind)), '[]')
            from s join smart_fields f on f.workspace_id = s.workspace_id) as fields,
         (select coalesce(json_agg(json_build_object('id', c.id, 'name', c.name, 'status', c.status, 'content', c.content,
                   'signature_template_ids', c.signature_template_ids, 'smart_fields_conditions', c.smart_fields_conditions, 'utm', c.utm,
                   'digest', md5(c.content::text || coalesce(c.utm::text, '')),
                   'experiment', (select json_build_object('id', e.id, 'arms',
                       (select json_agg(json_build_object('id', a.id, 'weight', a.weight, 'content', a.content, 'digest', md5(coalesce(a.content::text, ''))) order by a.position)
                          from experiment_arms a where a.workspace_id = e.workspace_id and a.experiment_id = e.id))
                     from experiments e where e.workspace_id = c.workspace_id and e.campaign_id = c.id and e.status = 'running'))
                   order by ${LIVE_ORDER}), '[]')
            from s join marketing_campaigns c on c.workspace_id = s.workspace_id
           where c.status = 'active' and s.id = any(c.signature_template_ids) and c.content is not null) as campaigns`;
const TEAMMATE_COLUMNS = `t.id, t.display_name, (select address from emails e where e.teammate_id = t.id order by e.is_primary desc, e.created_at limit 1) as address`;
/** A teammate's values (its field_values document) as [{smart_field_id, value}]. */
const VALUES_OF = (document: string) => `(select coalesce(json_agg(json_build_object('smart_field_id', x.key, 'value', x.value->>'value')), '[]')
            from jsonb_each(${document}) x)`;

const RENDER_SOURCE_SQL = `
  with ${SIGNATURE_CTE}, tm as (
    (select ${TEAMMATE_COLUMNS}, t.field_values
       from s join teammates t on t.workspace_id = s.workspace_id
      where t.id = $4::uuid and t.deleted_at is null)
    union all
    (select t.id, t.display_name, e.address, t.field_values
       from s join emails e on e.workspace_id = s.workspace_id join teammates t on t.id = e.teammate_id
      where lower(e.address) = lower($5::text) and t.deleted_at is null limit 1)
    limit 1
  )
  select ${SHARED_COLUMNS},
         (select json_build_object('id', tm.id, 'display_name', tm.display_name, 'address', tm.address) from tm) as teammate,
         ${VALUES_OF('(select field_values from tm)')} as values`;

/**
 * The same for many teammates ($4, ids) at once: the shared columns once, and each teammate with
 * its values (the compatibility report measures every assigned mailbox).
 */
const RENDER_SOURCES_SQL = `
  with ${SIGNATURE_CTE}
  select ${SHARED_COLUMNS},
         (select coalesce(json_agg(json_build_object('teammate', json_build_object('id', tm.id, 'display_name', tm.display_name, 'address', tm.address), 'values', tm.values)), '[]')
            from (select ${TEAMMATE_COLUMNS}, ${VALUES_OF('t.field_values')} as values
                    from s join unnest($4::uuid[]) as wanted(id) on true join teammates t on t.id = wanted.id and t.workspace_id = s.workspace_id
                   where t.deleted_at is null) tm) as teammates`;

/** A row of RENDER_SOURCE_SQL (and of RENDER_SOURCES_SQL, one per teammate). */
export interface RenderSourceRow {
  signature: SignatureRow | null;
  variant: VariantRow | null;
  teammate: { id: string; display_name: string; address: string | null } | null;
  fields: FieldRow[];
  values: { smart_field_id: string; value: string }[];
  campaigns: CampaignRow[];
}

/** The row of one (signature, teammate by id or by address), scoped to `workspaceId` when given (a named statement). */
export async function renderSourceRow(
  db: Queryable,
  q: { signatureId: string; workspaceId: string | null; kind: SignatureKind; teammateId: string | null; address: string | null },
): Promise<RenderSourceRow> {
  const { rows } = await db.query<RenderSourceRow>({
    name: 'render_source',
    text: RENDER_SOURCE_SQL,
    values: [q.signatureId, q.workspaceId, q.kind, q.teammateId, q.address],
  });
  return rows[0]!;
}

/** The shared columns once and, per teammate among `teammateIds` (current, of the signature's workspace), its row's teammate and values. */
export async function renderSourceRows(
  db: Queryable,
  q: { signatureId: string; workspaceId: string | null; kind: SignatureKind },
  teammateIds: readonly string[],
): Promise<Omit<RenderSourceRow, 'teammate' | 'values'> & { teammates: Pick<RenderSourceRow, 'teammate' | 'values'>[] | null }> {
  const { rows } = await db.query<Omit<RenderSourceRow, 'teammate' | 'values'> & { teammates: Pick<RenderSourceRow, 'teammate' | 'values'>[] | null }>(
    RENDER_SOURCES_SQL,
    [q.signatureId, q.workspaceId, q.kind, teammateIds],
  );
  return rows[0]!;
}
