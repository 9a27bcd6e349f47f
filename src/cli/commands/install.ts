/**
 * Support tools for one mailbox:
 *   sigsync install status --email ADDR
 *   sigsync install replay --email ADDR [--signature ID] [--dry-run] [--json]
 * The replay runs the same install as the worker, inline, and explains it: the teammate and the
 * signature chosen and why, the smart-field values used, a diff against the last installed HTML,
 * the provider's answer (secrets redacted) and the status transition. --dry-run calls no provider
 * and changes nothing.
 */
import type { Command } from 'commander';
import type { AppContext } from '../../context.ts';
import type { InstallOutcome } from '../../install/install.ts';
import type { SignatureKind } from '../../domain.ts';
import { UsageError } from '../errors.ts';
import { out, table } from '../output.ts';
import { requireUuid, withContext } from './admin.ts';
import { lineDiff } from '../diff.ts';

interface EmailInfo {
  id: string;
  workspace_id: string;
  address: string;
  teammate_id: string;
  display_name: string;
  deleted_at: Date | null;
}

async function findEmail(ctx: AppContext, address: string): Promise<EmailInfo> {
  const { rows } = await ctx.pool.query<EmailInfo>(
    `select e.id, e.workspace_id, e.address, e.teammate_id, t.display_name, t.deleted_at
       from emails e join teammates t on t.id = e.teammate_id where lower(e.address) = lower($1)`,
    [address],
  );
  if (!rows.length) throw new UsageError(`--email: no teammate has the address ${address}`);
  if (rows.length > 1) throw new UsageError(`--email: ${address} exists in ${rows.length} workspaces; this command needs it to be unique`);
  return rows[0]!;
}

export function installCommands(program: Command): void {
  const install = program.command('install').description('Inspect and replay mailbox installs.');

  install
    .command('status')
    .description('Show every installation of an address: status, error, since when.')
    .requiredOption('--email <address>', 'the mailbox address')
    .action(async (opts: { email: string }) => {
      await withContext(async (ctx) => {
        const email = await findEmail(ctx, opts.email);
        const { rows } = await ctx.pool.query(
          `select s.name as signature, i.kind, ig.kind as provider, i.status, coalesce(i.error_code, '') as error,
                  i.failing_since, i.installed_at, i.attempts, left(coalesce(i.content_hash, ''), 12) as hash
             from installations i join signatures s on s.id = i.signature_id join integrations ig on ig.id = i.integration_id
            where i.workspace_id = $1 and i.email_id = $2 order by s.name, i.kind, ig.kind`,
          [email.workspace_id, email.id],
        );
        out(`${email.address} (${email.display_name || 'no name'}${email.deleted_at ? ', removed' : ''})`);
        table(rows, ['signature', 'kind', 'provider', 'status', 'error', 'failing_since', 'installed_at', 'attempts', 'hash']);
      });
    });

  install
    .command('replay')
    .description('Install one mailbox now and explain every step (the same path the worker takes).')
    .requiredOption('--email <address>', 'the mailbox address')
    .option('--signature <id>', 'install this signature instead of the highest-priority one')
    .option('--kind <kind>', 'primary, reply or internal', 'primary')
    .option('--dry-run', 'render and decide, but call no provider and change nothing')
    .option('--json', 'print one JSON object instead of text')
    .action(async (opts: { email: string; signature?: string; kind: string; dryRun?: boolean; json?: boolean }) => {
      if (!['primary', 'reply', 'internal'].includes(opts.kind)) throw new UsageError('--kind: expected primary, reply or internal');
      const kind = opts.kind as SignatureKind;
      const signatureId = opts.signature ? requireUuid(opts.signature, '--signature') : undefined;
      const [{ installMailbox }, { signaturesFor, targetsForTeammates }, { redactDeep }] = await Promise.all([
        import('../../install/install.ts'),
        import('../../install/recipients.ts'),
        import('../../log.ts'),
      ]);
      await withContext(async (ctx) => {
        const email = await findEmail(ctx, opts.email);
        const choices = await signaturesFor(ctx.pool, email.workspace_id, email.teammate_id);
        const targets = await targetsForTeammates(ctx.pool, email.workspace_id, [email.teammate_id], [kind]);
        const mine = targets.filter((t) => t.emailId === email.id);
        const before = await ctx.pool.query<{ integration_id: string; status: string; last_html: string | null }>(
          `select integration_id, status, last_html from installations where email_id = $1 and kind = $2 ${signatureId ? 'and signature_id = $3' : ''}`,
          signatureId ? [email.id, kind, signatureId] : [email.id, kind],
        );
        const results: { integrationId: string; outcome: InstallOutcome; previousHtml: string | null }[] = [];
        for (const t of mine) {
          const prev = before.rows.find((r) => r.integration_id === t.integrationId);
          const outcome = await installMailbox(
            ctx,
            { workspaceId: email.workspace_id, emailId: email.id, kind, integrationId: t.integrationId, forced: true },
            { dryRun: opts.dryRun ?? false, ...(signatureId ? { signatureId } : {}) },
          );
          results.push({ integrationId: t.integrationId, outcome, previousHtml: prev?.last_html ?? null });
        }
        const report = {
          email: email.address,
          teammate: { id: email.teammate_id, display_name: email.display_name, removed: !!email.deleted_at },
          signatures: choices.map((c, i) => ({ id: c.signature_id, priority: c.priority, chosen: signatureId ? c.signature_id === signatureId : i === 0 })),
          chosen_because: signatureId ? 'requested with --signature' : choices.length ? `highest assignment priority (${choices[0]!.priority})` : 'no signature is assigned',
          dry_run: opts.dryRun ?? false,
          installs: results.map((r) => ({
            integration_id: r.integrationId,
            ...redactDeep(r.outcome),
            diff: 'rendered' in r.outcome && r.outcome.rendered ? lineDiff(r.previousHtml ?? '', r.outcome.rendered.html) : null,
          })),
        };
        if (opts.json) {
          out(JSON.stringify(report, null, 2));
          return;
        }
        out(`mailbox   ${report.email}`);
        out(`teammate  ${report.teammate.display_name || '(no name)'} ${report.teammate.id}${report.teammate.removed ? ' (removed)' : ''}`);
        for (const s of report.signatures) out(`signature ${s.id} priority ${s.priority}${s.chosen ? '  <- chosen' : ''}`);
        out(`why       ${report.chosen_because}${kind !== 'primary' ? `, ${kind} variant` : ''}`);
        if (!mine.length) out('no signatures integration installs this address');
        for (const r of report.installs) {
          out('');
          out(`integration ${r.integration_id}: ${r.outcome}`);
          const o = r as Record<string, unknown>;
          const rendered = o.rendered as { values?: Record<string, string>; hash?: string } | undefined;
          if (rendered?.values) for (const [k, v] of Object.entries(rendered.values)) out(`  value ${k} = ${JSON.stringify(v)}`);
          if (rendered?.hash) out(`  hash ${rendered.hash}`);
          if (o.reason) out(`  reason: ${String(o.reason)}`);
          if (o.message) out(`  error ${String(o.errorCode)}: ${String(o.message)}`);
          const tr = o.transition as { previous: string | null; status: string } | undefined;
          if (tr) out(`  status ${tr.previous ?? '(new)'} -> ${tr.status}`);
          if (o.providerResponse !== undefined) out(`  provider answered: ${JSON.stringify(o.providerResponse)}`);
          if (r.diff) {
            out('  diff against the last installed HTML:');
            for (const line of r.diff.split('\n')) out(`    ${line}`);
          }
        }
      });
    });
}
