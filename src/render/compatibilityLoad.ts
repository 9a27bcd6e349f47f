/**
 * A signature's compatibility report from the database (GET /v1/signatures/{id}/compatibility, the
 * warnings of a draft write and of a publish): each message kind it has (the signature, its reply
 * and internal variants). Where mailboxes are assigned, what they would receive is checked and
 * measured (`installed`, src/install/report.ts); otherwise a render with the values below.
 * Checked in every client; the sender's side is the clients of the mailboxes the workspace
 * installs into (compatibility.ts).
 *
 * - Values: each smart field's longest value in the workspace (of equal lengths, the lowest teammate
 *   id's), so the sizes are the largest any teammate's signature reaches (a field without values
 *   renders empty). One entry per field of the index smart_field_values_longest.
 * - Banner: the first `active` campaign naming the signature in the documented order (load.ts),
 *   whatever its conditions; a variant shows it only with `show_marketing_campaigns`.
 * - Clients: a signatures integration with Google Workspace means Gmail's clients, with Microsoft
 *   Entra Outlook's; a workspace with neither (or only Slack) gets every client.
 */
import { assetRefs } from '../assets/store.ts';
import type { Queryable } from '../db/tx.ts';
import type { CampaignCondition } from '../campaigns/choice.ts';
import { compileTemplate, type SmartFieldKind } from './compile.ts';
import { compatibilityReport, kindReport, type CompatibilityReport, type InstalledHtml, type KindReport, type MessageKind } from './compatibilityReport.ts';
import type { ClientFamily } from './emailClients.ts';
import { renderSignature } from './render.ts';
import type { ContentTree } from './schema.ts';
import { withUtm, type Utm } from './utm.ts';
import { validateContent } from './validate.ts';

const FAMILY_OF_INTEGRATION: Readonly<Record<string, ClientFamily>> = { google_workspace: 'gmail', microsoft_entra: 'outlook' };

/** The client families of the mailboxes the workspace installs into; [] when none is known. */
export async function installFamilies(db: Queryable, workspaceId: string): Promise<ClientFamily[]> {
  const { rows } = await db.query<{ kind: string }>(
    `select distinct kind from integrations where workspace_id = $1 and category = 'signatures' and status <> 'disconnected' order by kind`,
    [workspaceId],
  );
  return [...new Set(rows.map((r) => FAMILY_OF_INTEGRATION[r.kind]).filter((f): f is ClientFamily => f !== undefined))];
}

interface SourceRow {
  signature: { content: unknown; draft_content: unknown } | null;
  variants: { kind: 'reply' | 'internal'; content: unknown; draft_content: unknown; show_marketing_campaigns: boolean }[];
  fields: { id: string; kind: SmartFieldKind }[];
  values: { smart_field_id: string; value: string }[];
  campaign: { id: string; name: string; content: unknown; utm: Utm | null; smart_fields_conditions: CampaignCondition[][] } | null;
}

const SOURCE_SQL = `
  with s as (select id, workspace_id, content, draft_content from signatures where workspace_id = $1 and id = $2)
  select (select row_to_json(x) from (select content, draft_content from s) x) as signature,
         (select coalesce(json_agg(json_build_object('kind', v.kind, 'content', v.content, 'draft_content', v.draft_content,
                   'show_marketing_campaigns', v.show_marketing_campaigns) order by v.kind), '[]')
            from s join signature_variants v on v.workspace_id = s.workspace_id and v.signature_id = s.id) as variants,
         (select coalesce(json_agg(json_build_object('id', f.id, 'kind', f.kind)), '[]')
            from s join smart_fields f on f.workspace_id = s.workspace_id) as fields,
         (select coalesce(json_agg(json_build_object('smart_field_id', f.id, 'value', l.value)), '[]')
            from s join smart_fields f on f.workspace_id = s.workspace_id
            cross join lateral (select x.value from smart_field_values x where x.workspace_id = f.workspace_id and x.smart_field_id = f.id
                                 order by length(x.value) desc, x.teammate_id limit 1) l) as values,
         (select row_to_json(c) from (
            select c.id, c.name, c.content, c.utm, c.smart_fields_conditions
              from s join marketing_campaigns c on c.workspace_id = s.workspace_id
             where c.status = 'active' and s.id = any(c.signature_template_ids) and c.content is not null
             order by c.start_time desc nulls last, c.created_at desc, c.id limit 1) c) as campaign`;

/** The report for a signature of the workspace, or undefined when there is no such signature. */
export async function signatureCompatibility(
  db: Queryable,
  workspaceId: string,
  signatureId: string,
  opts: {
    content: 'draft' | 'published';
    publicBaseUrl?: string | undefined;
    /** The mailboxes a kind goes to, with the HTML each would receive (src/install/fit.ts); none: the longest values are measured. */
    installed?: (kind: MessageKind) => Promise<readonly InstalledHtml[]>;
  },
): Promise<CompatibilityReport | undefined> {
  const { rows } = await db.query<SourceRow>(SOURCE_SQL, [workspaceId, signatureId]);
  const row = rows[0]!;
  if (!row.signature) return undefined;
  const fieldIds = new Set(row.fields.map((f) => f.id));
  const kinds = Object.fromEntries(row.fields.map((f) => [f.id, f.kind]));
  const values = new Map(row.values.map((v) => [v.smart_field_id, v.value]));
  const families = await installFamilies(db, workspaceId);

  const tree = (t: unknown, field: string): ContentTree | undefined => {
    if (t === null || t === undefined) return undefined;
    const checked = validateContent(t, { field, smartFieldIds: fieldIds });
    return checked.ok ? checked.tree : undefined;
  };
  const pick = (r: { content: unknown; draft_content: unknown }) => (opts.content === 'draft' ? r.draft_content : r.content);
  const c = row.campaign;
  const bannerTree = c ? tree(c.content, 'marketing_campaigns.content') : undefined;
  const banner = c && bannerTree ? compileTemplate(withUtm(bannerTree, c.utm), { smartFieldKinds: kinds }) : null;

  const todo: { kind: MessageKind; tree: ContentTree; showsBanner: boolean }[] = [];
  const primary = tree(pick(row.signature), 'signature.draft_content');
  if (primary) todo.push({ kind: 'primary', tree: primary, showsBanner: true });
  for (const v of row.variants) {
    const t = tree(pick(v), `signature.variants.${v.kind}`);
    if (t) todo.push({ kind: v.kind, tree: t, showsBanner: v.show_marketing_campaigns });
  }
  const compiled = todo.map((k) => ({ ...k, template: compileTemplate(k.tree, { smartFieldKinds: kinds }) }));
  const assetIds = [...compiled.flatMap((k) => k.template.assetIds), ...(banner?.assetIds ?? [])];
  const assets = opts.publicBaseUrl && assetIds.length ? await assetRefs(db, workspaceId, assetIds, opts.publicBaseUrl) : undefined;

  const reports: KindReport[] = [];
  for (const k of compiled) {
    const out = renderSignature({
      tree: k.template,
      values,
      assets,
      signatureId,
      campaign: banner && c ? { id: c.id, name: c.name, status: 'active', content: banner, signature_template_ids: [signatureId], smart_fields_conditions: [] } : null,
      variant: k.kind === 'primary' ? null : { kind: k.kind, show_marketing_campaigns: k.showsBanner },
    });
    const mailboxes = opts.installed ? await opts.installed(k.kind) : [];
    reports.push(kindReport({ kind: k.kind, html: out.html, bannerAt: out.bannerAt, banner: out.banner && c ? { id: c.id, name: c.name } : null, mailboxes }, families));
  }
  return compatibilityReport(reports, families);
}
