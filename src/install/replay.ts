/**
 * Replaying one mailbox: installs it now, inline, through the worker's own path (installMailbox,
 * forced but for Slack), or only decides and renders (dry run), and explains it: the signature chosen and why,
 * each destination with the routing rule that chose it, the smart-field values, the provider's
 * answer (secrets redacted), the status transition, and the HTML before and after with a line diff.
 * A mailbox whose last attempt failed shows that error and what fixes it; against nothing installed
 * yet there is no diff. A Slack DM already sent with the same content is not sent again (a message,
 * unlike a mailbox setting, repeats).
 * `sigsync install replay` prints the report; the console's mailbox page shows it.
 */
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { createLogger, redactDeep } from '../log.ts';
import { fixFor } from '../installations/fixes.ts';
import { lineDiff } from './diff.ts';
import { installMailbox } from './install.ts';
import { lastAttempts } from '../installations/queries.ts';
import { signatureChoicesOfTeammates } from '../signatures/choices.ts';
import { findMailboxes, type MailboxRef } from '../teammates/addresses.ts';
import { routingFor } from './routing.ts';

/** The mailboxes with an address (src/teammates/addresses.ts): what a replay starts from. */
export { findMailboxes, type MailboxRef };

export interface ReplayOptions {
  kind: SignatureKind;
  signature?: string | undefined;
  dryRun?: boolean;
}

type LastAttempt = Awaited<ReturnType<typeof lastAttempts>>[number];

function lastAttemptView(last: LastAttempt | undefined) {
  if (!last) return null;
  return {
    status: last.status,
    error_code: last.error_code,
    error_message: last.error_message,
    failing_since: last.failing_since?.toISOString() ?? null,
    attempts: last.attempts,
    fix: fixFor(last.status, last.error_code),
  };
}

export async function replayMailbox(ctx: AppContext, email: MailboxRef, opts: ReplayOptions) {
  const { kind } = opts;
  const quiet = { ...ctx, logger: process.env.LOG_LEVEL ? ctx.logger : createLogger('silent') };
  const choices = (await signatureChoicesOfTeammates(ctx.pool, email.workspace_id, [email.teammate_id])).get(email.teammate_id) ?? [];
  const routes = await routingFor(ctx.pool, email.workspace_id, email.id);
  const before = await lastAttempts(ctx.pool, { workspaceId: email.workspace_id, emailId: email.id, kind, signatureId: opts.signature });
  const installs = [];
  for (const route of routes) {
    // A mailbox setting is written again as asked; a Slack DM is a message, sent again only when it changed.
    const forced = route.kind !== 'slack';
    const outcome = await installMailbox(
      quiet,
      { workspaceId: email.workspace_id, emailId: email.id, kind, integrationId: route.integration_id, forced },
      { dryRun: opts.dryRun ?? false, logger: quiet.logger, ...(opts.signature ? { signatureId: opts.signature } : {}) },
    );
    const last = before.find((r) => r.integration_id === route.integration_id);
    const previousHtml = last?.last_html ?? null;
    const html = 'rendered' in outcome && outcome.rendered ? outcome.rendered.html : null;
    installs.push({
      integration_id: route.integration_id,
      integration: { name: route.name, kind: route.kind },
      routing: { rule: route.rule, explanation: route.explanation },
      ...redactDeep(outcome),
      last_attempt: lastAttemptView(last),
      previous_html: previousHtml,
      html,
      // Against nothing installed, a diff would be the whole HTML as added lines: there is none.
      diff: html !== null && previousHtml !== null ? lineDiff(previousHtml, html) : null,
      rendered_bytes: html !== null ? Buffer.byteLength(html) : null,
    });
  }
  return {
    email: email.address,
    teammate: { id: email.teammate_id, display_name: email.display_name, removed: !!email.deleted_at },
    signatures: choices.map((c, i) => ({ id: c.signature_id, priority: c.priority, chosen: opts.signature ? c.signature_id === opts.signature : i === 0 })),
    chosen_because: opts.signature
      ? 'requested with --signature'
      : choices.length
        ? `highest assignment priority (${choices[0]!.priority})`
        : 'no signature is assigned',
    dry_run: opts.dryRun ?? false,
    installs,
  };
}

export type ReplayReport = Awaited<ReturnType<typeof replayMailbox>>;
