/**
 * Renders a signature for one address: the HTML an install writes, the add-in inserts and a
 * preview shows, from the one loader of render input (src/render/load.ts), with the address's
 * tracked links and view image (renderTracking.ts) when the workspace tracks events, and the
 * workspace's opt-out link. Here, not in render/, because it writes through analytics (which
 * imports render/); the install engine and the add-in both call it.
 */
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { renderSignature } from '../render/index.ts';
import { InvalidStoredContentError, loadRenderSource, type RenderQuery, type RenderSourceResult } from '../render/load.ts';
import { renderTracked } from './renderTracking.ts';
import { OptOutTokens } from './privacy.ts';

export interface RenderedForAddress {
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
  /** The signature rendered ('' when nothing was). */
  signatureId: string;
  /** The smart-field values used, by slug, for the support replay. */
  values: Record<string, string>;
  campaignId: string | null;
  /** The campaign whose banner the HTML carries, for the compatibility report. */
  campaign: { id: string; name: string } | null;
  /** Where the banner starts in the HTML (-1: none), so a check tells the banner's findings apart. */
  bannerAt: number;
}

export async function renderForAddress(
  ctx: AppContext,
  /** With `emailId`, links are tracked for that address when the workspace tracks events (src/analytics/renderTracking.ts). */
  req: {
    workspaceId: string;
    teammateId: string;
    signatureId: string;
    kind: SignatureKind;
    emailId?: string;
    /** The draft, for a dry run's report of it; by default the published content. */
    content?: 'published' | 'draft';
    /** Track links without creating rows (a token of the same length): measuring, not installing. */
    measure?: boolean;
  },
  /** Where the render source comes from: by default loadRenderSource; fit.ts passes one read with many others. */
  load: (q: RenderQuery) => Promise<RenderSourceResult> = (q) => loadRenderSource(ctx.pool, q),
): Promise<RenderedForAddress> {
  const empty = { html: '', text: '', hash: '', values: {}, campaignId: null, campaign: null, bannerAt: -1, signatureName: '', signatureId: req.signatureId };
  let loaded;
  try {
    const content = req.content ?? 'published';
    loaded = await load({
      workspaceId: req.workspaceId,
      signatureId: req.signatureId,
      teammate: { id: req.teammateId },
      kind: req.kind,
      content,
      publicBaseUrl: ctx.config.PUBLIC_BASE_URL,
    });
  } catch (e) {
    if (!(e instanceof InvalidStoredContentError)) throw e;
    return { ...empty, installationActivated: true, available: false, unavailableReason: e.message, errorCode: 'invalid_content' };
  }
  if (!loaded.ok) {
    const reason = loaded.what === 'signature' ? 'the signature no longer exists' : loaded.message;
    return { ...empty, installationActivated: loaded.installationActivated ?? true, available: false, unavailableReason: reason };
  }
  const { source } = loaded;
  // The workspace's opt-out link, for an optOut block: from the workspace the source was loaded for.
  const input = { ...source.input, optOutUrl: new OptOutTokens(ctx.secrets).url(ctx.config.PUBLIC_BASE_URL, source.workspaceId) };
  const out =
    req.emailId && source.tracksLinks
      ? await renderTracked(
          ctx,
          {
            workspaceId: source.workspaceId,
            signatureId: source.signature.id,
            campaignId: source.campaign?.id ?? null,
            armId: source.campaign?.armId ?? null,
            teammateId: source.teammate.id,
            emailId: req.emailId,
          },
          (tracking) => renderSignature(input, tracking),
          { create: !req.measure },
        )
      : renderSignature(input);
  const campaignId = out.banner && source.campaign ? source.campaign.id : null;
  return {
    html: out.html,
    text: out.text,
    hash: out.hash,
    installationActivated: source.signature.installationActivated,
    available: true,
    signatureName: source.signature.name,
    signatureId: source.signature.id,
    values: source.valuesBySlug,
    campaignId,
    campaign: out.banner && source.campaign ? source.campaign : null,
    bannerAt: out.bannerAt,
  };
}
