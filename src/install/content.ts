/**
 * Loads what one mailbox's signature is made of (the published tree of the signature or variant, the
 * teammate's smart-field values, the live campaign) and renders it. Compiled templates are cached
 * per published version, so a fan-out to thousands of mailboxes compiles each template once.
 */
import type { AppContext } from '../context.ts';
import type { SignatureKind } from './triggers.ts';
import { assetRefs } from '../assets/store.ts';
import { compileTemplate, renderSignature, type CampaignInput, type CompiledTemplate, type ContentTree, type SmartFieldKind } from '../render/index.ts';

export interface RenderedForInstall {
  html: string;
  text: string;
  hash: string;
  /** False when signature installation is switched off for this signature. */
  installationActivated: boolean;
  /** False when the requested variant is not activated or not published. */
  available: boolean;
  unavailableReason?: string;
  signatureName: string;
  /** The smart-field values used, by slug, for the support replay. */
  values: Record<string, string>;
  campaignId: string | null;
}

const MAX_CACHED = 500;
const compiled = new Map<string, CompiledTemplate>();

function compiledVersion(key: string, tree: unknown, kinds: Record<string, SmartFieldKind>): CompiledTemplate {
  let c = compiled.get(key);
  if (!c) {
    c = compileTemplate(tree as ContentTree, { smartFieldKinds: kinds });
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, c);
  }
  return c;
}

export async function renderForInstall(
  ctx: AppContext,
  req: { workspaceId: string; teammateId: string; signatureId: string; kind: SignatureKind },
): Promise<RenderedForInstall> {
  const { rows } = await ctx.pool.query<{
    name: string;
    installation_activated: boolean;
    content: unknown;
    published: Date | null;
    variant_activated: boolean | null;
    variant_content: unknown;
    variant_published: Date | null;
    show_campaigns: boolean | null;
  }>(
    `select s.name, s.installation_activated, s.content, s.last_published_at as published,
            v.activated as variant_activated, v.content as variant_content, v.last_published_at as variant_published,
            v.show_marketing_campaigns as show_campaigns
       from signatures s left join signature_variants v on v.signature_id = s.id and v.kind = $3
      where s.workspace_id = $1 and s.id = $2`,
    [req.workspaceId, req.signatureId, req.kind],
  );
  const sig = rows[0];
  const empty = { html: '', text: '', hash: '', values: {}, campaignId: null };
  if (!sig) return { ...empty, installationActivated: true, available: false, unavailableReason: 'the signature no longer exists', signatureName: '' };
  const base = { installationActivated: sig.installation_activated, signatureName: sig.name };
  const isVariant = req.kind !== 'primary';
  if (isVariant && (!sig.variant_activated || !sig.variant_content)) {
    return { ...empty, ...base, available: false, unavailableReason: `the ${req.kind} variant is not activated and published` };
  }
  const tree = isVariant ? sig.variant_content : sig.content;
  if (!tree) return { ...empty, ...base, available: false, unavailableReason: 'the signature is not published' };

  const [values, fields, campaigns] = await Promise.all([
    ctx.pool.query<{ smart_field_id: string; slug: string; value: string }>(
      `select v.smart_field_id, f.slug, v.value from smart_field_values v join smart_fields f on f.id = v.smart_field_id
        where v.workspace_id = $1 and v.teammate_id = $2 order by f.slug`,
      [req.workspaceId, req.teammateId],
    ),
    ctx.pool.query<{ id: string; kind: SmartFieldKind; updated_at: Date }>(`select id, kind, updated_at from smart_fields where workspace_id = $1`, [req.workspaceId]),
    ctx.pool.query<CampaignInput & { id: string; updated_at: Date }>(
      `select id, status, content, smart_fields_conditions, signature_template_ids::text[] as signature_template_ids, updated_at
         from marketing_campaigns
        where workspace_id = $1 and status = 'active' and $2::uuid = any(signature_template_ids) and content is not null
        order by start_time desc nulls last, id limit 1`,
      [req.workspaceId, req.signatureId],
    ),
  ]);
  const kinds = Object.fromEntries(fields.rows.map((f) => [f.id, f.kind]));
  const kindsVersion = fields.rows.reduce((m, f) => Math.max(m, f.updated_at.getTime()), 0);
  const byId: Record<string, string> = {};
  const bySlug: Record<string, string> = {};
  for (const v of values.rows) {
    byId[v.smart_field_id] = v.value;
    bySlug[v.slug] = v.value;
  }
  const published = (isVariant ? sig.variant_published : sig.published)?.getTime() ?? 0;
  const template = compiledVersion(`${req.signatureId}:${req.kind}:${published}:${kindsVersion}`, tree, kinds);
  const live = campaigns.rows[0];
  const campaign = live
    ? { ...live, content: compiledVersion(`campaign:${live.id}:${live.updated_at.getTime()}:${kindsVersion}`, live.content, kinds) as unknown as ContentTree }
    : null;
  const assetIds = [...template.assetIds, ...(campaign ? (campaign.content as unknown as CompiledTemplate).assetIds : [])];
  const assets = assetIds.length ? await assetRefs(ctx.pool, req.workspaceId, assetIds, ctx.config.PUBLIC_BASE_URL) : undefined;
  const out = renderSignature({
    tree: template,
    values: byId,
    assets,
    smartFieldKinds: kinds,
    campaign,
    signatureId: req.signatureId,
    variant: isVariant ? { kind: req.kind as 'reply' | 'internal', show_marketing_campaigns: sig.show_campaigns ?? false } : null,
  });
  return { html: out.html, text: out.text, hash: out.hash, ...base, available: true, values: bySlug, campaignId: out.banner && live ? live.id : null };
}
