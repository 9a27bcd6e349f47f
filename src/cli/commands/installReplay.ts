/**
 * `sigsync install replay`: installs one mailbox now, inline, through the worker's own path, and
 * explains it: the teammate, the signature chosen and why, each destination with the routing rule
 * that chose it, the smart-field values, the provider's answer (secrets redacted), the status
 * transition and a diff against the last installed HTML. Logs stay quiet unless LOG_LEVEL asks for
 * them, so the text is only the report. Exits 1 when an install failed.
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

interface Result {
  route: RoutingReason;
  outcome: InstallOutcome;
  previousHtml: string | null;
}

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
  const before = await ctx.pool.query<{ integration_id: string; last_html: string | null }>(
    `select integration_id, last_html from installations where email_id = $1 and kind = $2 ${opts.signature ? 'and signature_id = $3' : ''}`,
    opts.signature ? [email.id, kind, opts.signature] : [email.id, kind],
  );
  const results: Result[] = [];
  for (const route of routes) {
    const outcome = await installMailbox(
      quiet,
      { workspaceId: email.workspace_id, emailId: email.id, kind, integrationId: route.integration_id, forced: true },
      { dryRun: opts.dryRun ?? false, logger: quiet.logger, ...(opts.signature ? { signatureId: opts.signature } : {}) },
    );
    results.push({ route, outcome, previousHtml: before.rows.find((r) => r.integration_id === route.integration_id)?.last_html ?? null });
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
      diff: 'rendered' in r.outcome && r.outcome.rendered ? lineDiff(r.previousHtml ?? '', r.outcome.rendered.html) : null,
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

function printInstall(r: Record<string, unknown> & { integration: { name: string; kind: string }; routing: { explanation: string }; diff: string | null }): void {
  out('');
  out(`${r.integration.name} (${r.integration.kind}, ${String(r.integration_id)}): ${String(r.outcome)}`);
  out(`  chosen because ${r.routing.explanation}`);
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
  }
}
