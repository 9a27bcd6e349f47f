/**
 * A signature's compatibility report as installed: src/render/compatibilityLoad.ts's report, with
 * each kind checked and measured on what the assigned mailboxes would receive (fit.ts, the
 * install's own dry run), so that its verdict per mailbox is `install replay --dry-run`'s.
 * GET /v1/signatures/{id}/compatibility, the warnings of a draft write and of a publish, and
 * `sigsync render --check` (for one teammate) read it from here.
 */
import type { AppContext } from '../context.ts';
import { signatureCompatibility } from '../render/compatibilityLoad.ts';
import { compatibilityWarnings, type CompatibilityReport, type CompatibilityWarning } from '../render/compatibilityReport.ts';
import { mailboxFits } from './fit.ts';

export async function signatureReport(
  ctx: AppContext,
  workspaceId: string,
  signatureId: string,
  opts: { content: 'draft' | 'published'; teammateIds?: string[] },
): Promise<CompatibilityReport | undefined> {
  return signatureCompatibility(ctx.pool, workspaceId, signatureId, {
    content: opts.content,
    publicBaseUrl: ctx.config.PUBLIC_BASE_URL,
    installed: (kind) =>
      mailboxFits(ctx, { workspaceId, signatureId, kind, content: opts.content, ...(opts.teammateIds ? { teammateIds: opts.teammateIds } : {}) }),
  });
}

/** The warnings of the signature's draft (after a write) or published content (after a publish). */
export async function signatureWarnings(
  ctx: AppContext,
  workspaceId: string,
  signatureId: string,
  content: 'draft' | 'published',
): Promise<CompatibilityWarning[]> {
  const report = await signatureReport(ctx, workspaceId, signatureId, { content });
  return report ? compatibilityWarnings(report) : [];
}
