/**
 * Renders one mailbox's signature for an install, from the one loader of render input
 * (src/render/load.ts), which previews use too.
 */
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { renderSignature } from '../render/index.ts';
import { InvalidStoredContentError, loadRenderSource } from '../render/load.ts';
import { renderTracked } from '../analytics/renderTracking.ts';

export interface RenderedForInstall {
  html: string;
  text: string;
  hash: string;
  /** False when signature installation is switched off for this signature. */
  installationActivated: boolean;
  /** False when the requested variant is not activated or not published, or the content no longer validates. */
  available: boolean;
  unavailableReason?: string;
  /** Set when the published content no longer validates: the install fails with this code. */
  errorCode?: 'invalid_content';
  signatureName: string;
  /** The smart-field values used, by slug, for the support replay. */
  values: Record<string, string>;
  campaignId: string | null;
}

export async function renderForInstall(
  ctx: AppContext,
  /** With `emailId`, links are tracked for that address when the workspace tracks events (src/analytics/renderTracking.ts). */
  req: { workspaceId: string; teammateId: string; signatureId: string; kind: SignatureKind; emailId?: string },
): Promise<RenderedForInstall> {
  const empty = { html: '', text: '', hash: '', values: {}, campaignId: null, signatureName: '' };
  let loaded;
  try {
    loaded = await loadRenderSource(ctx.pool, { workspaceId: req.workspaceId, signatureId: req.signatureId, teammate: { id: req.teammateId }, kind: req.kind, content: 'published', publicBaseUrl: ctx.config.PUBLIC_BASE_URL });
  } catch (e) {
    if (!(e instanceof InvalidStoredContentError)) throw e;
    return { ...empty, installationActivated: true, available: false, unavailableReason: e.message, errorCode: 'invalid_content' };
  }
  if (!loaded.ok) {
    const reason = loaded.what === 'signature' ? 'the signature no longer exists' : loaded.message;
    return { ...empty, installationActivated: loaded.installationActivated ?? true, available: false, unavailableReason: reason };
  }
  const { source } = loaded;
  const out = req.emailId && source.tracksLinks
    ? await renderTracked(ctx, { workspaceId: source.workspaceId, signatureId: source.signature.id, campaignId: source.campaign?.id ?? null, teammateId: source.teammate.id, emailId: req.emailId }, (tracking) => renderSignature(source.input, tracking))
    : renderSignature(source.input);
  const campaignId = out.banner && source.campaign ? source.campaign.id : null;
  return {
    html: out.html,
    text: out.text,
    hash: out.hash,
    installationActivated: source.signature.installationActivated,
    available: true,
    signatureName: source.signature.name,
    values: source.valuesBySlug,
    campaignId,
  };
}
