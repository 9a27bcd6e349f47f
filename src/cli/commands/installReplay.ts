/**
 * `sigsync install replay`: installs one mailbox now, inline, through the worker's own path, and
 * explains it: the teammate, the signature chosen and why, each destination with the routing rule
 * that chose it, the smart-field values, the provider's answer (secrets redacted), the status
 * transition and a diff against the last installed HTML. A mailbox whose last attempt failed shows
 * that error and what fixes it first, and a mailbox with nothing installed yet does not print its
 * whole HTML as a diff. A Slack DM already sent with the same content is not sent again (a message,
 * unlike a mailbox setting, repeats). Logs stay quiet unless LOG_LEVEL asks for them, so the text is
 * only the report. Exits 1 when an install failed.
 */
import type { AppContext } from '../../context.ts';
import type { InstallOutcome } from '../../install/install.ts';
import type { RoutingReason } from '../../install/recipients.ts';
import type { SignatureKind } from '../../domain.ts';
import { out } from '../../output.ts';
import { lineDiff } from '../diff.ts';
import type { EmailInfo } from './install.ts';

export interface ReplayOptions {
  email: string;
  signature?: string | undefined;
  kind: string;
  dryRun?: boolean;
  json?: boolean;
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

interface Result {
  route: RoutingReason;
  outcome: InstallOutcome;
  last: LastAttempt | undefined;
}

/** What fixes a failed install, by its error code (connectors/types.ts ConnectorErrorCode). */
export const FIXES: Record<string, string> = {
  user_not_found: 'the provider has no mailbox at this address (deleted, renamed or not licensed): fix it in the directory or the mail admin console, then replay',
  forbidden: 'the provider refuses to change this mailbox (mail service off for the user, or a missing permission): turn mail on for the user or grant the permission, then replay',
  unauthorized_client: 'the service account is not allowed the Gmail scope: add it to the domain-wide delegation entry (docs/google-workspace.md), then replay',
  channel_not_found: 'Slack cannot open a DM with this member (deactivated, or a bot): nothing to install there',
  signature_too_long: 'the rendered HTML is over the provider\'s limit: shorten the signature or the campaign banner, publish, then replay',
  multi_signatures_not_supported: 'this Outlook mailbox keeps one signature (roaming signatures off): the primary one is installed; reply and internal variants are not',
  access_lost: 'the integration lost access: sigsync integration reconnect INTEGRATION_ID --credentials-file FILE, then replay',
  rate_limited: 'the provider asked to slow down: the worker retries by itself; replay later to see it now',
  transient: 'a network or provider failure: the worker retries by itself; replay later to see it now',
  invalid_response: 'the provider answered something unexpected (see the message): replay later; if it stays, report the message',
};

export async function replay(ctx: AppContext, email: EmailInfo, opts: ReplayOptions): Promise<void> {
  const [{ installMailbox }, { signaturesFor, routingFor }, { redactDeep, createLogger }] = await Promise.all([
    import('../../install/install.ts'),
    import('../../install/recipients.ts'),
    import('../../log.ts'),
  ]);
  const kind = opts.kind as SignatureKind;
  const quiet = { ...ctx, logger: process.env.LOG_LEVEL ? ctx.logger : createLogger('silent') };
  const choices = await signaturesFor(ctx.pool, email.workspace_id, email.teammate_id);
  const routes = await routingFor(ctx.pool, email.id);
  const before = await ctx.pool.query<LastAttempt>(
    `select integration_id, last_html, status, error_code, error_message, failing_since, attempts
       from installations where email_id = $1 and kind = $2 ${opts.signature ? 'and signature_id = $3' : ''}
      order by updated_at desc`,
    opts.signature ? [email.id, kind, opts.signature] : [email.id, kind],
  );
  const results: Result[] = [];
  for (const route of routes) {
    // A mailbox setting is written again as asked; a Slack DM is a message, sent again only when it changed.
    const forced = route.kind !== 'slack';
    const outcome = await installMailbox(
      quiet,
      { workspaceId: email.workspace_id, emailId: email.id, kind, integrationId: route.integration_id, forced },
      { dryRun: opts.dryRun ?? false, logger: quiet.logger, ...(opts.signature ? { signatureId: opts.signature } : {}) },
    );
    results.push({ route, outcome, last: before.rows.find((r) => r.integration_id === route.integration_id) });
  }
  const report = {
    email: email.address,
    teammate: { id: email.teammate_id, display_name: email.display_name, removed: !!email.deleted_at },
    signatures: choices.map((c, i) => ({ id: c.signature_id, priority: c.priority, chosen: opts.signature ? c.signature_id === opts.signature : i === 0 })),
    chosen_because: opts.signature ? 'requested with --signature' : choices.length ? `highest assignment priority (${choices[0]!.priority})` : 'no signature is assigned',
    dry_run: opts.dryRun ?? false,
    installs: results.map((r) => ({
      integration_id: r.route.integration_id,
      integration: { name: r.route.name, kind: r.route.kind },
      routing: { rule: r.route.rule, explanation: r.route.explanation },
      ...redactDeep(r.outcome),
      last_attempt: r.last
        ? {
            status: r.last.status,
            error_code: r.last.error_code,
            error_message: r.last.error_message,
            failing_since: r.last.failing_since?.toISOString() ?? null,
            attempts: r.last.attempts,
            fix: r.last.status === 'failed' || r.last.status === 'access_lost' ? (FIXES[r.last.error_code ?? (r.last.status === 'access_lost' ? 'access_lost' : '')] ?? null) : null,
          }
        : null,
      // Against nothing installed, a diff would be the whole HTML as added lines: there is none.
      diff: 'rendered' in r.outcome && r.outcome.rendered && r.last?.last_html ? lineDiff(r.last.last_html, r.outcome.rendered.html) : null,
      rendered_bytes: 'rendered' in r.outcome && r.outcome.rendered ? Buffer.byteLength(r.outcome.rendered.html) : null,
    })),
  };
  if (results.some((r) => r.outcome.outcome === 'failed')) process.exitCode = 1;
  if (opts.json) {
    out(JSON.stringify(report, null, 2));
    return;
  }
  out(`mailbox   ${report.email}`);
  out(`teammate  ${report.teammate.display_name || '(no name)'} ${report.teammate.id}${report.teammate.removed ? ' (removed)' : ''}`);
  for (const s of report.signatures) out(`signature ${s.id} priority ${s.priority}${s.chosen ? '  <- chosen' : ''}`);
  out(`why       ${report.chosen_because}${kind !== 'primary' ? `, ${kind} variant` : ''}`);
  if (!routes.length) out('no signatures integration installs this address');
  for (const r of report.installs) printInstall(r);
}

type LastAttemptView = { status: string; error_code: string | null; error_message: string | null; failing_since: string | null; attempts: number; fix: string | null };

function printInstall(
  r: Record<string, unknown> & { integration: { name: string; kind: string }; routing: { explanation: string }; diff: string | null; last_attempt: LastAttemptView | null; rendered_bytes: number | null },
): void {
  out('');
  out(`${r.integration.name} (${r.integration.kind}, ${String(r.integration_id)}): ${String(r.outcome)}`);
  out(`  chosen because ${r.routing.explanation}`);
  const last = r.last_attempt;
  if (last?.error_code || last?.error_message) {
    out(`  last attempt ${last.status}${last.error_code ? ` (${last.error_code})` : ''}${last.failing_since ? ` since ${last.failing_since}` : ''}, ${last.attempts} attempt(s): ${last.error_message ?? ''}`);
    if (last.fix) out(`  fix: ${last.fix}`);
  }
  if (r.outcome === 'unchanged' && r.integration.kind === 'slack') out('  the DM with this signature was already sent; Slack messages are not sent twice');
  const rendered = r.rendered as { values?: Record<string, string>; hash?: string } | undefined;
  if (rendered?.values) for (const [k, v] of Object.entries(rendered.values)) out(`  value ${k} = ${JSON.stringify(v)}`);
  if (rendered?.hash) out(`  hash ${rendered.hash}`);
  if (r.reason) out(`  reason: ${String(r.reason)}`);
  if (r.message) out(`  error ${String(r.errorCode)}: ${String(r.message)}`);
  const tr = r.transition as { previous: string | null; status: string } | undefined;
  if (tr) out(`  status ${tr.previous ?? '(new)'} -> ${tr.status}`);
  if (r.providerResponse !== undefined) out(`  provider answered: ${JSON.stringify(r.providerResponse)}`);
  if (r.diff) {
    out('  diff against the last installed HTML:');
    for (const line of r.diff.split('\n')) out(`    ${line}`);
  } else if (r.rendered_bytes !== null && !last?.status.startsWith('installed')) {
    out(`  nothing installed yet to compare with; the rendered HTML is ${r.rendered_bytes} bytes (--json shows it)`);
  }
}
