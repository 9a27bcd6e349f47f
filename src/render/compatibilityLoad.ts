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
 *   renders empty). One entry per field, read from the teammates' field_values documents.
 * - Banner: the first `active` campaign naming the signature in the documented order (load.ts),
 *   whatever its conditions; a variant shows it only with `show_marketing_campaigns`.
 * - Clients: a signatures integration with Google Workspace means Gmail's clients, with Microsoft
 *   Entra Outlook's; a workspace with neither (or only Slack) gets every client.
 */
import { assetRefs } from '../assets/assets.ts';
import { firstLiveBanner } from '../campaigns/queries.ts';
import { smartFieldSummaries } from '../db/smartFields.ts';
import type { Queryable } from '../db/tx.ts';
import { signatureIntegrationKinds } from '../integrations/queries.ts';
import { storedContents } from '../signatures/queries.ts';
import { longestValues } from '../teammates/queries.ts';
import { compileTemplate, type SmartFieldKind } from './compile.ts';
import { compatibilityReport, kindReport, type CompatibilityReport, type InstalledHtml, type KindReport, type MessageKind } from './compatibilityReport.ts';
import type { ClientFamily } from './emailClients.ts';
import { renderSignature } from './render.ts';
import type { ContentTree } from './schema.ts';
import { withUtm } from './utm.ts';
import { validateContent } from './validate.ts';

const FAMILY_OF_INTEGRATION: Readonly<Record<string, ClientFamily>> = { google_workspace: 'gmail', microsoft_entra: 'outlook' };

/** The client families of the mailboxes the workspace installs into; [] when none is known. */
export async function installFamilies(db: Queryable, workspaceId: string): Promise<ClientFamily[]> {
  const kinds = await signatureIntegrationKinds(db, workspaceId);
  return [...new Set(kinds.map((k) => FAMILY_OF_INTEGRATION[k]).filter((f): f is ClientFamily => f !== undefined))];
}

/** What the report renders, from the owners: the signature's trees, the smart fields, their longest values, the banner, the client families. */
async function loadSource(db: Queryable, workspaceId: string, signatureId: string) {
  const [signature, fields, campaign, families] = await Promise.all([
    storedContents(db, workspaceId, signatureId),
    smartFieldSummaries(db, workspaceId),
    firstLiveBanner(db, workspaceId, signatureId),
    installFamilies(db, workspaceId),
  ]);
  if (!signature) return undefined;
  const values = await longestValues(
    db,
    workspaceId,
    fields.map((f) => f.id),
  );
  return { signature, fields, values, campaign, families };
}

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
  const source = await loadSource(db, workspaceId, signatureId);
  if (!source) return undefined;
  const { signature, families } = source;
  const fieldIds = new Set(source.fields.map((f) => f.id));
  const kinds: Record<string, SmartFieldKind> = Object.fromEntries(source.fields.map((f) => [f.id, f.kind]));
  const values = new Map(source.values.map((v) => [v.smart_field_id, v.value]));

  const tree = (t: unknown, field: string): ContentTree | undefined => {
    if (t === null || t === undefined) return undefined;
    const checked = validateContent(t, { field, smartFieldIds: fieldIds });
    return checked.ok ? checked.tree : undefined;
  };
  const pick = (r: { content: unknown; draft_content: unknown }) => (opts.content === 'draft' ? r.draft_content : r.content);
  const c = source.campaign ?? null;
  const bannerTree = c ? tree(c.content, 'marketing_campaigns.content') : undefined;
  const banner = c && bannerTree ? compileTemplate(withUtm(bannerTree, c.utm), { smartFieldKinds: kinds }) : null;

  const todo: { kind: MessageKind; tree: ContentTree; showsBanner: boolean }[] = [];
  const primary = tree(pick(signature), 'signature.draft_content');
  if (primary) todo.push({ kind: 'primary', tree: primary, showsBanner: true });
  for (const v of signature.variants) {
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
      campaign:
        banner && c ? { id: c.id, name: c.name, status: 'active', content: banner, signature_template_ids: [signatureId], smart_fields_conditions: [] } : null,
      variant: k.kind === 'primary' ? null : { kind: k.kind, show_marketing_campaigns: k.showsBanner },
    });
    const mailboxes = opts.installed ? await opts.installed(k.kind) : [];
    reports.push(
      kindReport({ kind: k.kind, html: out.html, bannerAt: out.bannerAt, banner: out.banner && c ? { id: c.id, name: c.name } : null, mailboxes }, families),
    );
  }
  return compatibilityReport(reports, families);
}
