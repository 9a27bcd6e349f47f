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
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import { createLogger, redactDeep } from '../log.ts';
import { fixFor } from '../installations/fixes.ts';
import { lineDiff } from './diff.ts';
import { installMailbox } from './install.ts';
import { routingFor, signaturesFor } from './recipients.ts';

export interface MailboxRef {
  id: string;
  workspace_id: string;
  address: string;
  teammate_id: string;
  display_name: string;
  deleted_at: Date | null;
}

/** The mailboxes with this address (case-insensitive), in one workspace or, for the operator's CLI, in all. */
export async function findMailboxes(db: Queryable, address: string, workspaceId?: string): Promise<MailboxRef[]> {
  const { rows } = await db.query<MailboxRef>(
    `select e.id, e.workspace_id, e.address, e.teammate_id, t.display_name, t.deleted_at
       from emails e join teammates t on t.id = e.teammate_id
      where lower(e.address) = lower($1) ${workspaceId ? 'and e.workspace_id = $2' : ''}`,
    workspaceId ? [address, workspaceId] : [address],
  );
  return rows;
}

export interface ReplayOptions {
  kind: SignatureKind;
  signature?: string | undefined;
  dryRun?: boolean;
}

interface LastAttempt {
  integration_id: string;
  last_html: string | null;
  status: string;
  error_code: string | null;
  error_message: string | null;
  failing_since: Date | null;
  attempts: number;
}

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
  const choices = await signaturesFor(ctx.pool, email.workspace_id, email.teammate_id);
  const routes = await routingFor(ctx.pool, email.id);
  const before = await ctx.pool.query<LastAttempt>(
    `select integration_id, last_html, status, error_code, error_message, failing_since, attempts
       from installations where workspace_id = $1 and email_id = $2 and kind = $3 ${opts.signature ? 'and signature_id = $4' : ''}
      order by updated_at desc`,
    opts.signature ? [email.workspace_id, email.id, kind, opts.signature] : [email.workspace_id, email.id, kind],
  );
  const installs = [];
  for (const route of routes) {
    // A mailbox setting is written again as asked; a Slack DM is a message, sent again only when it changed.
    const forced = route.kind !== 'slack';
    const outcome = await installMailbox(
      quiet,
      { workspaceId: email.workspace_id, emailId: email.id, kind, integrationId: route.integration_id, forced },
      { dryRun: opts.dryRun ?? false, logger: quiet.logger, ...(opts.signature ? { signatureId: opts.signature } : {}) },
    );
    const last = before.rows.find((r) => r.integration_id === route.integration_id);
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
    chosen_because: opts.signature ? 'requested with --signature' : choices.length ? `highest assignment priority (${choices[0]!.priority})` : 'no signature is assigned',
    dry_run: opts.dryRun ?? false,
    installs,
  };
}

export type ReplayReport = Awaited<ReturnType<typeof replayMailbox>>;
