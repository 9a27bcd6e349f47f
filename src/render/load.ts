/**
 * What a signature renders from, for every caller: installs, the Outlook add-in, `sigsync render`
 * and `install replay`. One loader, so that a preview and the installed HTML cannot differ.
 *
 * It loads in one statement (the read model renderSourceRows.ts), scoped to the signature's workspace: the tree (the published content, the draft, or for
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
import { assetRefs } from '../assets/assets.ts';
import { campaignApplies, type VariantSettings } from '../campaigns/choice.ts';
import { assignArm } from '../experiments/assignment.ts';
import { compileTemplate, type CompiledTemplate } from './compile.ts';
import {
  renderSourceRow,
  renderSourceRows,
  type CampaignRow,
  type FieldRow,
  type RenderSourceRow,
  type SignatureRow,
  type VariantRow,
} from './renderSourceRows.ts';
import type { ContentTree } from './schema.ts';
import { withUtm } from './utm.ts';
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
function pickTree(
  q: RenderQuery,
  sig: SignatureRow,
  variant: VariantRow | undefined,
): { tree: unknown; content: 'published' | 'draft'; digest: string | null } | RenderUnavailable {
  const row = q.kind === 'primary' ? sig : variant;
  if (q.kind !== 'primary' && !variant)
    return { what: 'variant', message: `signature ${sig.id} has no ${q.kind} variant`, installationActivated: sig.installation_activated };
  if (q.kind !== 'primary' && q.content === 'published' && !variant!.activated) {
    return { what: 'variant', message: `the ${q.kind} variant is not activated and published`, installationActivated: sig.installation_activated };
  }
  const useDraft = q.content === 'draft' || (q.content === 'preview' && row!.content === null);
  const tree = useDraft ? row!.draft_content : row!.content;
  if (tree === null || tree === undefined) {
    return q.kind === 'primary'
      ? { what: 'content', message: 'the signature is not published', installationActivated: sig.installation_activated }
      : {
          what: 'variant',
          message: q.content === 'published' ? `the ${q.kind} variant is not activated and published` : `signature ${sig.id} has no ${q.kind} variant`,
          installationActivated: sig.installation_activated,
        };
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
function pickCampaign(
  rows: CampaignRow[],
  fields: FieldRow[],
  signatureId: string,
  teammateId: string,
  values: Map<string, string>,
  variant: VariantSettings | null,
  warnings: string[],
) {
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

export async function loadRenderSource(db: Queryable, q: RenderQuery): Promise<RenderSourceResult> {
  const row = await renderSourceRow(db, {
    signatureId: q.signatureId,
    workspaceId: q.workspaceId ?? null,
    kind: q.kind,
    teammateId: 'id' in q.teammate ? q.teammate.id : null,
    address: 'email' in q.teammate ? q.teammate.email : null,
  });
  return sourceFromRow(q, row, (ws, ids) => assetRefs(db, ws, ids, q.publicBaseUrl!));
}

/** The render source of one row: the content picked and compiled, the values, the campaign, the assets (read with `assets`). */
export async function sourceFromRow(
  q: RenderQuery,
  row: RenderSourceRow,
  assetsOf: (workspaceId: string, ids: string[]) => Promise<Map<string, { url: string }>>,
): Promise<RenderSourceResult> {
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
      : {
          ok: false,
          what: 'email',
          message: `no teammate with the address ${q.teammate.email} in the signature's workspace`,
          installationActivated: sig.installation_activated,
        };
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
  const valuesBySlug = Object.fromEntries(
    valueRows.map((r) => [slugOf.get(r.smart_field_id) ?? r.smart_field_id, r.value]).sort(([a], [b]) => (a! < b! ? -1 : 1)),
  );
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
export async function loadRenderSources(
  db: Queryable,
  q: Omit<RenderQuery, 'teammate'>,
  teammateIds: string[],
): Promise<Map<string, Promise<RenderSourceResult>>> {
  const row = await renderSourceRows(db, { signatureId: q.signatureId, workspaceId: q.workspaceId ?? null, kind: q.kind }, teammateIds);
  const { teammates, ...shared } = row;
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
