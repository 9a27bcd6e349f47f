/**
 * Which assigned mailboxes would take a signature, measured on what each would receive: for every
 * (address, integration) the signature goes to, the install's own dry run (installMailbox with
 * `dryRun`, the path of `install replay --dry-run`) renders the mailbox's HTML, tracked links and
 * view image included, and compares it with its destination's limit (destinations.ts). The
 * compatibility report's verdict is this, so it cannot differ from the replay's.
 *
 * `measure`: links not tracked yet are written with a token of the same length instead of creating
 * their rows, so nothing is written. `content: 'draft'`: the draft, as if it were published, for
 * the mailboxes where this signature wins (or, never published, every assigned one).
 *
 * Cost: a few statements for all the mailboxes (the targets, each integration's install inputs, the
 * render sources of this signature: preload below), then the dry runs, which read nothing more and
 * render one after the other. The dry run is the install's own, fed what it would have read.
 */
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { getIntegration, type IntegrationRow } from '../integrations/integrations.ts';
import { createLogger } from '../log.ts';
import { destinationLimit, type DestinationWay } from './destinations.ts';
import { installMailbox } from './install.ts';
import { loadInstallInputs, type InstallInput } from './load.ts';
import { targetsForTeammates, type InstallTarget } from './routing.ts';
import { assignedTeammates, signatureChoicesOfTeammates } from '../signatures/choices.ts';
import { loadRenderSource, loadRenderSources, type RenderQuery, type RenderSourceResult } from '../render/load.ts';

export interface MailboxFit {
  emailId: string;
  address: string;
  integration: { id: string; name: string; kind: string };
  way: DestinationWay;
  size: number;
  limit: number;
  fits: boolean;
  /** What the mailbox would receive (for the compatibility check of the installed HTML). */
  html: string;
  bannerAt: number;
  campaign: { id: string; name: string } | null;
}

export interface FitQuery {
  workspaceId: string;
  signatureId: string;
  kind: SignatureKind;
  content: 'published' | 'draft';
  /** Only these teammates (`sigsync render --check` for one person); default every assigned one. */
  teammateIds?: string[];
}

/**
 * The teammates whose mailboxes would get this signature's draft once published: those it is not
 * chosen for yet (never published) or whose first choice it is.
 */
async function draftTeammates(ctx: AppContext, q: FitQuery, teammateIds: string[]): Promise<string[]> {
  const choices = await signatureChoicesOfTeammates(ctx.pool, q.workspaceId, teammateIds);
  return teammateIds.filter((id) => {
    const mine = choices.get(id) ?? [];
    return !mine.some((c) => c.signature_id === q.signatureId) || mine[0]?.signature_id === q.signatureId;
  });
}

/**
 * What every dry run reads, read for all the targets at once: each integration's inputs in one
 * statement, the render sources of this signature in one. A dry run whose winner is another
 * signature reads its own, as always.
 */
async function preload(ctx: AppContext, q: FitQuery, targets: InstallTarget[], integrations: Map<string, IntegrationRow | undefined>) {
  const inputs = new Map<string, InstallInput>();
  for (const [integrationId, integration] of integrations) {
    if (!integration) continue;
    const emailIds = targets.filter((t) => t.integrationId === integrationId).map((t) => t.emailId);
    const rows = await loadInstallInputs(
      ctx.pool,
      { workspaceId: q.workspaceId, emailIds, integrationId, kind: q.kind },
      q.content === 'draft' ? q.signatureId : undefined,
    );
    for (const r of rows) inputs.set(`${integrationId}|${r.id}`, r);
  }
  const teammateIds = [...new Set([...inputs.values()].map((i) => i.teammate_id))];
  const base = { workspaceId: q.workspaceId, signatureId: q.signatureId, kind: q.kind, content: q.content, publicBaseUrl: ctx.config.PUBLIC_BASE_URL };
  const sources = await loadRenderSources(ctx.pool, base, teammateIds);
  const renderSource = (r: RenderQuery): Promise<RenderSourceResult> => {
    const same =
      r.signatureId === base.signatureId &&
      r.workspaceId === base.workspaceId &&
      r.kind === base.kind &&
      r.content === base.content &&
      r.publicBaseUrl === base.publicBaseUrl;
    const loaded = same && 'id' in r.teammate ? sources.get(r.teammate.id) : undefined;
    return loaded ?? loadRenderSource(ctx.pool, r);
  };
  return (t: InstallTarget) => ({ input: inputs.get(`${t.integrationId}|${t.emailId}`), integration: integrations.get(t.integrationId), renderSource });
}

/** Every mailbox the signature goes to for `kind`, with its size against its destination's limit. */
export async function mailboxFits(ctx: AppContext, q: FitQuery): Promise<MailboxFit[]> {
  let teammates = await assignedTeammates(ctx.pool, q.workspaceId, q.signatureId);
  if (q.teammateIds) teammates = teammates.filter((t) => q.teammateIds!.includes(t));
  if (q.content === 'draft') teammates = await draftTeammates(ctx, q, teammates);
  const targets = await targetsForTeammates(ctx.pool, q.workspaceId, teammates, [q.kind]);
  const integrations = new Map<string, IntegrationRow | undefined>();
  for (const t of targets)
    if (!integrations.has(t.integrationId)) integrations.set(t.integrationId, await getIntegration(ctx.pool, q.workspaceId, t.integrationId));
  const preloaded = await preload(ctx, q, targets, integrations);
  const quiet = { ...ctx, logger: createLogger('silent') };
  const fits: MailboxFit[] = [];
  for (const [n, t] of targets.entries()) {
    // Renders are CPU work: let the process answer other requests between batches of them.
    if (n % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    const integration = integrations.get(t.integrationId);
    if (!integration) continue;
    const outcome = await installMailbox(
      quiet,
      { workspaceId: q.workspaceId, emailId: t.emailId, kind: q.kind, integrationId: t.integrationId, forced: false },
      {
        dryRun: true,
        measure: true,
        content: q.content,
        logger: quiet.logger,
        preloaded: preloaded(t),
        ...(q.content === 'draft' ? { signatureId: q.signatureId } : {}),
      },
    );
    const rendered = 'rendered' in outcome ? outcome.rendered : undefined;
    if (!rendered?.available || rendered.signatureId !== q.signatureId) continue;
    const refused = outcome.outcome === 'skipped' && outcome.errorCode === 'signature_too_long';
    const { way, limit: max } = destinationLimit(integration);
    fits.push({
      emailId: t.emailId,
      address: preloaded(t).input?.address ?? t.emailId,
      integration: { id: integration.id, name: integration.name, kind: integration.kind },
      way,
      size: rendered.html.length,
      limit: max,
      fits: !refused,
      html: rendered.html,
      bannerAt: rendered.bannerAt,
      campaign: rendered.campaign,
    });
  }
  return fits.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.integration.name < b.integration.name ? -1 : 1));
}
