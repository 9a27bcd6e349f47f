/**
 * Loads everything a render needs from the database, scoped to the signature's workspace: the tree
 * (published content, or the draft), the teammate's smart-field values, the smart fields' kinds, the
 * variant's settings, and the live campaign that applies to this teammate.
 *
 * Where several active campaigns target the signature, the most recently started one whose
 * conditions match the teammate wins. Stored trees are validated again before rendering; a tree
 * that no longer validates (a smart field was deleted since) is an error naming the member, and a
 * campaign whose content does not validate is skipped with a warning.
 */
import type { Queryable } from '../db/tx.ts';
import { campaignApplies, type CampaignCondition, type CampaignInput, type VariantSettings } from './campaign.ts';
import type { SmartFieldKind } from './compile.ts';
import type { RenderInput } from './render.ts';
import type { ContentTree } from './schema.ts';
import { assetUuidsIn, validateContent } from './validate.ts';
import { assetRefs } from '../assets/store.ts';

export class RenderSourceNotFoundError extends Error {
  override readonly name = 'RenderSourceNotFoundError';
  /** Which input named the missing thing: signature, teammate, email or variant. */
  readonly what: 'signature' | 'teammate' | 'email' | 'variant';

  constructor(what: RenderSourceNotFoundError['what'], message: string) {
    super(message);
    this.what = what;
  }
}

export class InvalidStoredContentError extends Error {
  override readonly name = 'InvalidStoredContentError';
}

export interface RenderSourceQuery {
  signatureId: string;
  teammateId?: string | undefined;
  email?: string | undefined;
  variant?: 'reply' | 'internal' | undefined;
  /** Render draft_content instead of the published content. */
  draft?: boolean | undefined;
  /** PUBLIC_BASE_URL, for the URLs of the assets the tree shows (assetUuid tokens); without it they render nothing. */
  publicBaseUrl?: string | undefined;
}

export interface RenderSource {
  input: RenderInput;
  workspaceId: string;
  signature: { id: string; name: string };
  teammate: { id: string; displayName: string; email: string | null };
  /** Which content was used: the published one, or the draft (asked for, or never published). */
  content: 'published' | 'draft';
  campaign: { id: string; name: string } | null;
  warnings: string[];
}

interface CampaignRow {
  id: string;
  name: string;
  status: string;
  content: unknown;
  signature_template_ids: string[];
  smart_fields_conditions: CampaignCondition[][];
}

export async function loadRenderSource(db: Queryable, q: RenderSourceQuery): Promise<RenderSource> {
  const sig = (
    await db.query<{ id: string; workspace_id: string; name: string; content: unknown; draft_content: unknown }>(
      'select id, workspace_id, name, content, draft_content from signatures where id = $1',
      [q.signatureId],
    )
  ).rows[0];
  if (!sig) throw new RenderSourceNotFoundError('signature', `no signature ${q.signatureId}`);
  const ws = sig.workspace_id;

  const teammate = q.teammateId
    ? (
        await db.query<{ id: string; display_name: string; address: string | null }>(
          `select t.id, t.display_name, (select address from emails e where e.teammate_id = t.id order by e.is_primary desc, e.created_at limit 1) as address
             from teammates t where t.workspace_id = $1 and t.id = $2 and t.deleted_at is null`,
          [ws, q.teammateId],
        )
      ).rows[0]
    : (
        await db.query<{ id: string; display_name: string; address: string | null }>(
          `select t.id, t.display_name, e.address from emails e join teammates t on t.id = e.teammate_id
            where e.workspace_id = $1 and lower(e.address) = lower($2) and t.deleted_at is null`,
          [ws, q.email ?? ''],
        )
      ).rows[0];
  if (!teammate) {
    throw q.teammateId
      ? new RenderSourceNotFoundError('teammate', `no teammate ${q.teammateId} in the signature's workspace`)
      : new RenderSourceNotFoundError('email', `no teammate with the address ${q.email ?? ''} in the signature's workspace`);
  }

  let rawTree: unknown = q.draft ? sig.draft_content : (sig.content ?? sig.draft_content);
  let content: RenderSource['content'] = q.draft || sig.content === null ? 'draft' : 'published';
  let variant: VariantSettings | undefined;
  if (q.variant) {
    const v = (
      await db.query<{ content: unknown; draft_content: unknown; show_marketing_campaigns: boolean }>(
        'select content, draft_content, show_marketing_campaigns from signature_variants where workspace_id = $1 and signature_id = $2 and kind = $3',
        [ws, sig.id, q.variant],
      )
    ).rows[0];
    const vTree = v ? (q.draft ? v.draft_content : (v.content ?? v.draft_content)) : null;
    if (!v || vTree === null) throw new RenderSourceNotFoundError('variant', `signature ${sig.id} has no ${q.variant} variant`);
    rawTree = vTree;
    content = q.draft || v.content === null ? 'draft' : 'published';
    variant = { kind: q.variant, show_marketing_campaigns: v.show_marketing_campaigns };
  }

  const fields = (await db.query<{ id: string; kind: SmartFieldKind }>('select id, kind from smart_fields where workspace_id = $1', [ws])).rows;
  const smartFieldIds = new Set(fields.map((f) => f.id));
  const smartFieldKinds = new Map(fields.map((f) => [f.id, f.kind]));
  const field = `${q.variant ? 'signature_variants' : 'signatures'}.${content === 'draft' ? 'draft_content' : 'content'}`;
  const checked = validateContent(rawTree, { field, smartFieldIds });
  if (!checked.ok) {
    const first = checked.details[0]!;
    throw new InvalidStoredContentError(`the stored content of signature ${sig.id} is invalid: ${first.field}: ${first.message}`);
  }

  const values = new Map(
    (
      await db.query<{ smart_field_id: string; value: string }>('select smart_field_id, value from smart_field_values where workspace_id = $1 and teammate_id = $2', [
        ws,
        teammate.id,
      ])
    ).rows.map((r) => [r.smart_field_id, r.value]),
  );

  const warnings: string[] = [];
  let campaign: (CampaignInput & { id: string; name: string }) | undefined;
  const candidates = (
    await db.query<CampaignRow>(
      `select id, name, status, content, signature_template_ids::text[] as signature_template_ids, smart_fields_conditions
         from marketing_campaigns
        where workspace_id = $1 and status = 'active' and $2::uuid = any(signature_template_ids)
        order by start_time desc nulls last, created_at desc, id`,
      [ws, sig.id],
    )
  ).rows;
  for (const c of candidates) {
    const banner = validateContent(c.content, { field: 'marketing_campaigns.content', smartFieldIds });
    if (!banner.ok) {
      warnings.push(`campaign ${c.id} (${c.name}) skipped: ${banner.details[0]!.field}: ${banner.details[0]!.message}`);
      continue;
    }
    const input: CampaignInput & { id: string; name: string } = { ...c, content: banner.tree };
    if (campaignApplies(input, sig.id, values, variant)) {
      campaign = input;
      break;
    }
  }

  const assetIds = q.publicBaseUrl ? [...assetUuidsIn(checked.tree), ...(campaign ? assetUuidsIn(campaign.content) : [])] : [];
  const assets = assetIds.length ? await assetRefs(db, ws, assetIds, q.publicBaseUrl!) : undefined;

  return {
    input: {
      tree: checked.tree as ContentTree,
      values,
      assets,
      smartFieldKinds,
      campaign: campaign ?? null,
      signatureId: sig.id,
      variant: variant ?? null,
    },
    workspaceId: ws,
    signature: { id: sig.id, name: sig.name },
    teammate: { id: teammate.id, displayName: teammate.display_name, email: teammate.address },
    content,
    campaign: campaign ? { id: campaign.id, name: campaign.name } : null,
    warnings,
  };
}
