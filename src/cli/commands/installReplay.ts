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
import type { SignatureKind } from '../../domain.ts';
import type { MailboxRef } from '../../install/replay.ts';
import { out } from '../../output.ts';

export interface ReplayOptions {
  email: string;
  signature?: string | undefined;
  kind: string;
  dryRun?: boolean;
  json?: boolean;
}

export async function replay(ctx: AppContext, email: MailboxRef, opts: ReplayOptions): Promise<void> {
  const { replayMailbox } = await import('../../install/replay.ts');
  const kind = opts.kind as SignatureKind;
  const full = await replayMailbox(ctx, email, { kind, signature: opts.signature, dryRun: opts.dryRun ?? false });
  // The HTML itself stays out of the printed report (the diff shows what changed).
  const report = { ...full, installs: full.installs.map(({ previous_html: _p, html: _h, ...rest }) => rest) };
  if (report.installs.some((r) => r.outcome === 'failed')) process.exitCode = 1;
  if (opts.json) {
    out(JSON.stringify(report, null, 2));
    return;
  }
  out(`mailbox   ${report.email}`);
  out(`teammate  ${report.teammate.display_name || '(no name)'} ${report.teammate.id}${report.teammate.removed ? ' (removed)' : ''}`);
  for (const s of report.signatures) out(`signature ${s.id} priority ${s.priority}${s.chosen ? '  <- chosen' : ''}`);
  out(`why       ${report.chosen_because}${kind !== 'primary' ? `, ${kind} variant` : ''}`);
  if (!report.installs.length) out('no signatures integration installs this address');
  for (const r of report.installs) printInstall(r as unknown as Parameters<typeof printInstall>[0]);
}

type LastAttemptView = {
  status: string;
  error_code: string | null;
  error_message: string | null;
  failing_since: string | null;
  attempts: number;
  fix: string | null;
};

function printInstall(
  r: Record<string, unknown> & {
    integration: { name: string; kind: string };
    routing: { explanation: string };
    diff: string | null;
    last_attempt: LastAttemptView | null;
    rendered_bytes: number | null;
  },
): void {
  out('');
  out(`${r.integration.name} (${r.integration.kind}, ${String(r.integration_id)}): ${String(r.outcome)}`);
  out(`  chosen because ${r.routing.explanation}`);
  const last = r.last_attempt;
  if (last?.error_code || last?.error_message) {
    out(
      `  last attempt ${last.status}${last.error_code ? ` (${last.error_code})` : ''}${last.failing_since ? ` since ${last.failing_since}` : ''}, ${last.attempts} attempt(s): ${last.error_message ?? ''}`,
    );
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
