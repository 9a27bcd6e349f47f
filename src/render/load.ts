/**
 * What a signature renders from, for every caller: installs, the Outlook add-in, `sigsync render`
 * and `install replay`. One loader, so that a preview and the installed HTML cannot differ.
 *
 * It loads in one statement, scoped to the signature's workspace: the tree (the published content, the draft, or for
 * a preview the published content falling back to the draft), the variant's settings, the
 * teammate's smart-field values, the smart fields' kinds, and the live campaign.
 *
 * The live campaign: the rule and the candidates' order are campaigns/choice.ts's; this statement
 * loads the signature's `active` campaigns in that order, and the first whose banner validates and
 * that applies to this teammate and kind is the banner. While the campaign runs an experiment, the
 * banner is the teammate's arm's (experiments/assignment.ts, from the experiment and the teammate).
 *
 * Stored trees are validated again before rendering, once per published version and smart-field
 * set, and compiled once: the compiled template is cached (a bounded map, keyed by signature,
 * kind, an md5 of the published content and the smart fields' ids and kinds), so a fan-out to
 * thousands of mailboxes validates and compiles each template once. The key is the content itself,
 * not its publication time: two publishes in one millisecond (the time is the transaction's start)
 * with different drafts must not share a template. Drafts are validated and compiled on every load.
 */
import type { Queryable } from '../db/tx.ts';
import { assetRefs } from '../assets/store.ts';
import { campaignApplies, LIVE_ORDER, type CampaignCondition, type VariantSettings } from '../campaigns/choice.ts';
import { assignArm } from '../experiments/assignment.ts';
import { compileTemplate, type CompiledTemplate, type SmartFieldKind } from './compile.ts';
import type { ContentTree } from './schema.ts';
import { withUtm, type Utm } from './utm.ts';
import type { CampaignInput, RenderInput } from './render.ts';
import { validateContent } from './validate.ts';

import type { SignatureKind } from '../domain.ts';

export interface RenderQuery {
  signatureId: string;
  /** The workspace the caller works in; without it, the signature's own (previews from the CLI). */
  workspaceId?: string | undefined;
  teammate: { id: string } | { email: string };
  kind: SignatureKind;
  /**
   * `published`: only published content (installs, the add-in); `draft`: the draft; `preview`:
   * the published content, or the draft when the signature was never published.
   */
  content: 'published' | 'draft' | 'preview';
  /** PUBLIC_BASE_URL, for the URLs of the assets the tree shows (assetUuid tokens); without it they render nothing. */
  publicBaseUrl?: string | undefined;
}

export interface RenderSource {
  input: RenderInput & { tree: CompiledTemplate };
  workspaceId: string;
  signature: { id: string; name: string; installationActivated: boolean };
  teammate: { id: string; displayName: string; email: string | null };
  /** Which content was used. */
  content: 'published' | 'draft';
  /** Whether the workspace tracks the links of installed signatures (`event_tracking.enabled`). */
  tracksLinks: boolean;
  /** The campaign whose banner shows, and the experiment arm whose banner it is while an experiment runs. */
  campaign: { id: string; name: string; armId: string | null } | null;
  /** The smart-field values used, by slug (for the support replay). */
  valuesBySlug: Record<string, string>;
  /** Campaigns skipped because their stored banner no longer validates. */
  warnings: string[];
}

/** Why there is nothing to render: which input named what is missing, in words. */
export interface RenderUnavailable {
  what: 'signature' | 'teammate' | 'email' | 'variant' | 'content';
  message: string;
  /** Known when the signature exists: installs report `not_activated` before anything else. */
  installationActivated?: boolean;
}

export type RenderSourceResult = { ok: true; source: RenderSource } | ({ ok: false } & RenderUnavailable);

/** The stored tree no longer validates (for example, a smart field it names was deleted). */
export class InvalidStoredContentError extends Error {
  override readonly name = 'InvalidStoredContentError';
}

interface SignatureRow {
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

interface VariantRow {
  activated: boolean;
  content: unknown;
  draft_content: unknown;
  /** md5 of the published content (null when unpublished). */
  content_digest: string | null;
  show_marketing_campaigns: boolean;
}

interface CampaignRow {
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

interface FieldRow {
  id: string;
  slug: string;
  kind: SmartFieldKind;
}

const MAX_CACHED = 500;
/** The one cache of compiled templates: signatures, variants and campaign banners. */
const compiled = new Map<string, CompiledTemplate>();

/**
 * The tree validated and compiled, cached under `version` when there is one (published content,
 * banners); a tree that does not validate throws InvalidStoredContentError naming the field.
 */
function compileStored(version: string | null, tree: unknown, field: string, fields: FieldRow[], finish = (t: ContentTree) => t): CompiledTemplate {
  const hit = version === null ? undefined : compiled.get(version);
  if (hit) return hit;
  const checked = validateContent(tree, { field, smartFieldIds: new Set(fields.map((f) => f.id)) });
  if (!checked.ok) {
    const first = checked.details[0]!;
    throw new InvalidStoredContentError(`${first.field}: ${first.message}`);
  }
  const template = compileTemplate(finish(checked.tree), { smartFieldKinds: Object.fromEntries(fields.map((f) => [f.id, f.kind])) });
  if (version !== null) {
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
    compiled.set(version, template);
  }
  return template;
}

/**
 * What a compiled template depends on besides its tree: the workspace's smart fields and their
 * kinds (a token of an unknown field does not validate; a kind decides how a value renders).
 */
function fieldsKey(fields: FieldRow[]): string {
  return fields
    .map((f) => `${f.id}=${f.kind}`)
    .sort()
    .join(',');
}

/** The tree to render and which content it is, or why there is none. */
function pickTree(q: RenderQuery, sig: SignatureRow, variant: VariantRow | undefined): { tree: unknown; content: 'published' | 'draft'; digest: string | null } | RenderUnavailable {
  const row = q.kind === 'primary' ? sig : variant;
  if (q.kind !== 'primary' && !variant) return { what: 'variant', message: `signature ${sig.id} has no ${q.kind} variant`, installationActivated: sig.installation_activated };
  if (q.kind !== 'primary' && q.content === 'published' && !variant!.activated) {
    return { what: 'variant', message: `the ${q.kind} variant is not activated and published`, installationActivated: sig.installation_activated };
  }
  const useDraft = q.content === 'draft' || (q.content === 'preview' && row!.content === null);
  const tree = useDraft ? row!.draft_content : row!.content;
  if (tree === null || tree === undefined) {
    return q.kind === 'primary'
      ? { what: 'content', message: 'the signature is not published', installationActivated: sig.installation_activated }
      : { what: 'variant', message: q.content === 'published' ? `the ${q.kind} variant is not activated and published` : `signature ${sig.id} has no ${q.kind} variant`, installationActivated: sig.installation_activated };
  }
  return { tree, content: useDraft ? 'draft' : 'published', digest: useDraft ? null : row!.content_digest };
}

/**
 * The banner a campaign shows this teammate: its own, or while an experiment runs the assigned arm's
 * (an A/A arm without a banner shows the campaign's), with the cache key of its compiled template.
 */
function bannerOf(c: CampaignRow, teammateId: string): { armId: string | null; content: unknown; key: string; field: string } {
  const own = { armId: null as string | null, content: c.content, key: `campaign:${c.id}:${c.digest}`, field: 'marketing_campaigns.content' };
  const arms = c.experiment?.arms;
  if (!c.experiment || !arms?.length) return own;
  const arm = arms.find((a) => a.id === assignArm(c.experiment!.id, teammateId, arms))!;
  if (arm.content === null) return { ...own, armId: arm.id };
  return { armId: arm.id, content: arm.content, key: `arm:${arm.id}:${arm.digest}:${c.digest}`, field: 'experiment_arms.content' };
}

/** The first campaign, in the documented order, whose banner validates and applies. */
function pickCampaign(rows: CampaignRow[], fields: FieldRow[], signatureId: string, teammateId: string, values: Map<string, string>, variant: VariantSettings | null, warnings: string[]) {
  for (const c of rows) {
    let banner: CompiledTemplate;
    const shown = bannerOf(c, teammateId);
    try {
      banner = compileStored(`${shown.key}:${fieldsKey(fields)}`, shown.content, shown.field, fields, (t) => withUtm(t, c.utm));
    } catch (e) {
      if (!(e instanceof InvalidStoredContentError)) throw e;
      warnings.push(`campaign ${c.id} (${c.name}) skipped: ${e.message}`);
      continue;
    }
    const input: CampaignInput & { id: string; name: string; armId: string | null } = { ...c, content: banner, armId: shown.armId };
    if (campaignApplies(input, signatureId, values, variant)) return input;
  }
  return null;
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
const VALUES_OF = (teammate: string) => `(select coalesce(json_agg(json_build_object('smart_field_id', x.smart_field_id, 'value', x.value)), '[]')
            from s join smart_field_values x on x.workspace_id = s.workspace_id and x.teammate_id = ${teammate})`;

const RENDER_SOURCE_SQL = `
  with ${SIGNATURE_CTE}, tm as (
    (select ${TEAMMATE_COLUMNS}
       from s join teammates t on t.workspace_id = s.workspace_id
      where t.id = $4::uuid and t.deleted_at is null)
    union all
    (select t.id, t.display_name, e.address
       from s join emails e on e.workspace_id = s.workspace_id join teammates t on t.id = e.teammate_id
      where lower(e.address) = lower($5::text) and t.deleted_at is null limit 1)
    limit 1
  )
  select ${SHARED_COLUMNS},
         (select row_to_json(tm) from tm) as teammate,
         ${VALUES_OF('(select id from tm)')} as values`;

/**
 * The same for many teammates ($4, ids) at once: the shared columns once, and each teammate with
 * its values (the compatibility report measures every assigned mailbox).
 */
const RENDER_SOURCES_SQL = `
  with ${SIGNATURE_CTE}
  select ${SHARED_COLUMNS},
         (select coalesce(json_agg(json_build_object('teammate', json_build_object('id', tm.id, 'display_name', tm.display_name, 'address', tm.address), 'values', tm.values)), '[]')
            from (select ${TEAMMATE_COLUMNS}, ${VALUES_OF('t.id')} as values
                    from s join unnest($4::uuid[]) as wanted(id) on true join teammates t on t.id = wanted.id and t.workspace_id = s.workspace_id
                   where t.deleted_at is null) tm) as teammates`;

/** A row of RENDER_SOURCE_SQL (and of loadMany.ts's, one per teammate). */
export interface RenderSourceRow {
  signature: SignatureRow | null;
  variant: VariantRow | null;
  teammate: { id: string; display_name: string; address: string | null } | null;
  fields: FieldRow[];
  values: { smart_field_id: string; value: string }[];
  campaigns: CampaignRow[];
}

export async function loadRenderSource(db: Queryable, q: RenderQuery): Promise<RenderSourceResult> {
  const { rows } = await db.query<RenderSourceRow>({
    name: 'render_source',
    text: RENDER_SOURCE_SQL,
    values: [q.signatureId, q.workspaceId ?? null, q.kind, 'id' in q.teammate ? q.teammate.id : null, 'email' in q.teammate ? q.teammate.email : null],
  });
  return sourceFromRow(q, rows[0]!, (ws, ids) => assetRefs(db, ws, ids, q.publicBaseUrl!));
}

/** The render source of one row: the content picked and compiled, the values, the campaign, the assets (read with `assets`). */
export async function sourceFromRow(q: RenderQuery, row: RenderSourceRow, assetsOf: (workspaceId: string, ids: string[]) => Promise<Map<string, { url: string }>>): Promise<RenderSourceResult> {
  if (!row.signature) return { ok: false, what: 'signature', message: `no signature ${q.signatureId}` };
  const sig = row.signature;
  const ws = sig.workspace_id;
  const variant = q.kind === 'primary' ? undefined : (row.variant ?? undefined);
  const picked = pickTree(q, sig, variant);
  if ('what' in picked) return { ok: false, ...picked };

  const teammate = row.teammate;
  if (!teammate) {
    return 'id' in q.teammate
      ? { ok: false, what: 'teammate', message: `no teammate ${q.teammate.id} in the signature's workspace`, installationActivated: sig.installation_activated }
      : { ok: false, what: 'email', message: `no teammate with the address ${q.teammate.email} in the signature's workspace`, installationActivated: sig.installation_activated };
  }
  const fields = row.fields;
  const valueRows = row.values;
  const campaignRows = row.campaigns;

  const field = `${q.kind === 'primary' ? 'signatures' : 'signature_variants'}.${picked.content === 'draft' ? 'draft_content' : 'content'}`;
  const version = picked.digest ? `${sig.id}:${q.kind}:${picked.digest}:${fieldsKey(fields)}` : null;
  let tree: CompiledTemplate;
  try {
    tree = compileStored(version, picked.tree, field, fields);
  } catch (e) {
    if (e instanceof InvalidStoredContentError) throw new InvalidStoredContentError(`the stored content of signature ${sig.id} is invalid: ${e.message}`);
    throw e;
  }

  const values = new Map(valueRows.map((r) => [r.smart_field_id, r.value]));
  const slugOf = new Map(fields.map((f) => [f.id, f.slug]));
  const valuesBySlug = Object.fromEntries(valueRows.map((r) => [slugOf.get(r.smart_field_id) ?? r.smart_field_id, r.value]).sort(([a], [b]) => (a! < b! ? -1 : 1)));
  const variantSettings: VariantSettings | null = q.kind === 'primary' ? null : { kind: q.kind, show_marketing_campaigns: variant!.show_marketing_campaigns };
  const warnings: string[] = [];
  const campaign = pickCampaign(campaignRows, fields, sig.id, teammate.id, values, variantSettings, warnings);
  const assetIds = q.publicBaseUrl ? [...tree.assetIds, ...(campaign ? (campaign.content as CompiledTemplate).assetIds : [])] : [];
  const assets = assetIds.length ? await assetsOf(ws, assetIds) : undefined;

  return {
    ok: true,
    source: {
      input: { tree, values, assets, campaign, signatureId: sig.id, variant: variantSettings },
      workspaceId: ws,
      signature: { id: sig.id, name: sig.name, installationActivated: sig.installation_activated },
      teammate: { id: teammate.id, displayName: teammate.display_name, email: teammate.address },
      content: picked.content,
      tracksLinks: sig.tracks_links,
      campaign: campaign ? { id: campaign.id, name: campaign.name, armId: campaign.armId } : null,
      valuesBySlug,
      warnings,
    },
  };
}

/**
 * loadRenderSource for many teammates (by id) in one statement, its assets read once per set:
 * teammate id -> what loadRenderSource would answer for it (a rejected promise where it would throw).
 */
export async function loadRenderSources(db: Queryable, q: Omit<RenderQuery, 'teammate'>, teammateIds: string[]): Promise<Map<string, Promise<RenderSourceResult>>> {
  const { rows } = await db.query<Omit<RenderSourceRow, 'teammate' | 'values'> & { teammates: Pick<RenderSourceRow, 'teammate' | 'values'>[] | null }>(RENDER_SOURCES_SQL, [
    q.signatureId,
    q.workspaceId ?? null,
    q.kind,
    teammateIds,
  ]);
  const { teammates, ...shared } = rows[0]!;
  const found = new Map((teammates ?? []).map((t) => [t.teammate!.id, t]));
  const assets = new Map<string, Promise<Map<string, { url: string }>>>();
  const assetsOf = (ws: string, ids: string[]) => {
    const key = ids.join(',');
    if (!assets.has(key)) assets.set(key, assetRefs(db, ws, ids, q.publicBaseUrl!));
    return assets.get(key)!;
  };
  const out = new Map<string, Promise<RenderSourceResult>>();
  for (const id of teammateIds) {
    const result = sourceFromRow({ ...q, teammate: { id } }, { ...shared, teammate: null, values: [], ...found.get(id) }, assetsOf);
    result.catch(() => undefined); // read by the caller; not an unhandled rejection before it is
    out.set(id, result);
  }
  return out;
}
