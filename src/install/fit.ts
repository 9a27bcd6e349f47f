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
 * Cost: one dry run per mailbox (three short reads and a render), four at a time.
 */
import pLimit from 'p-limit';
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { getIntegration, type IntegrationRow } from '../integrations/repository.ts';
import { createLogger } from '../log.ts';
import { destinationLimit, type DestinationWay } from './destinations.ts';
import { installMailbox } from './install.ts';
import { assignedTeammates, signaturesFor, targetsForTeammates } from './recipients.ts';

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

/** The teammates whose mailboxes would get this signature's draft once published. */
async function draftTeammates(ctx: AppContext, q: FitQuery, teammateIds: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of teammateIds) {
    const choices = await signaturesFor(ctx.pool, q.workspaceId, id);
    const first = choices[0];
    if (!choices.some((c) => c.signature_id === q.signatureId) || first?.signature_id === q.signatureId) out.push(id);
  }
  return out;
}

/** Every mailbox the signature goes to for `kind`, with its size against its destination's limit. */
export async function mailboxFits(ctx: AppContext, q: FitQuery): Promise<MailboxFit[]> {
  let teammates = await assignedTeammates(ctx.pool, q.workspaceId, q.signatureId);
  if (q.teammateIds) teammates = teammates.filter((t) => q.teammateIds!.includes(t));
  if (q.content === 'draft') teammates = await draftTeammates(ctx, q, teammates);
  const targets = await targetsForTeammates(ctx.pool, q.workspaceId, teammates, [q.kind]);
  const integrations = new Map<string, IntegrationRow | undefined>();
  for (const t of targets) if (!integrations.has(t.integrationId)) integrations.set(t.integrationId, await getIntegration(ctx.pool, q.workspaceId, t.integrationId));
  const addresses = new Map(
    (await ctx.pool.query<{ id: string; address: string }>(`select id, address from emails where workspace_id = $1 and id = any($2::uuid[])`, [q.workspaceId, targets.map((t) => t.emailId)])).rows.map((r) => [r.id, r.address]),
  );
  const quiet = { ...ctx, logger: createLogger('silent') };
  const limit = pLimit(4);
  const fits = await Promise.all(
    targets.map((t) =>
      limit(async (): Promise<MailboxFit | null> => {
        const integration = integrations.get(t.integrationId);
        if (!integration) return null;
        const outcome = await installMailbox(
          quiet,
          { workspaceId: q.workspaceId, emailId: t.emailId, kind: q.kind, integrationId: t.integrationId, forced: false },
          { dryRun: true, measure: true, content: q.content, logger: quiet.logger, ...(q.content === 'draft' ? { signatureId: q.signatureId } : {}) },
        );
        const rendered = 'rendered' in outcome ? outcome.rendered : undefined;
        if (!rendered?.available || rendered.signatureId !== q.signatureId) return null;
        const refused = outcome.outcome === 'skipped' && outcome.errorCode === 'signature_too_long';
        const { way, limit: max } = destinationLimit(integration);
        return {
          emailId: t.emailId,
          address: addresses.get(t.emailId) ?? t.emailId,
          integration: { id: integration.id, name: integration.name, kind: integration.kind },
          way,
          size: rendered.html.length,
          limit: max,
          fits: !refused,
          html: rendered.html,
          bannerAt: rendered.bannerAt,
          campaign: rendered.campaign,
        };
      }),
    ),
  );
  return fits.filter((f): f is MailboxFit => f !== null).sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.integration.name < b.integration.name ? -1 : 1));
}
