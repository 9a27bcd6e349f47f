/**
 * `sigsync privacy`: what is tracked per person, and a visitor's export and erasure
 * (docs/privacy.md). Every change is recorded in the audit trail with the CLI's user as actor.
 */
import type { Command } from 'commander';
import { out } from '../../output.ts';
import { UsageError } from '../errors.ts';
import { cliActor, requireUuid, withContext } from './admin.ts';

const MODES = ['per_person', 'aggregate', 'off'];

type Mode = 'per_person' | 'aggregate' | 'off';

function modeOf(value: string | undefined, flag: string): Mode | undefined {
  if (value === undefined) return undefined;
  if (!MODES.includes(value)) throw new UsageError(`${flag}: per_person, aggregate or off; got "${value}"`);
  return value as Mode;
}

function retentionOf(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'default') return null;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 36500)
    throw new UsageError(`--retention-days: a number of days from 1 to 36500, or default; got "${value}"`);
  return Number(value);
}

export function privacyCommands(program: Command): void {
  const privacy = program.command('privacy').description("What is tracked per person, opt-outs, a visitor's export and erasure (docs/privacy.md).");
  privacy
    .command('settings')
    .description('Show or change what is tracked per person and the retention; a change says what it did to rows already recorded.')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--views <mode>', 'views: per_person, aggregate (the default for a new workspace) or off')
    .option('--clicks <mode>', 'clicks: per_person (the default), aggregate or off')
    .option('--retention-days <days>', 'days raw rows and visitors are kept, 1 to 36500, or default (ANALYTICS_RETENTION_DAYS)')
    .action(async (opts: { workspace: string; views?: string; clicks?: string; retentionDays?: string }) => {
      const id = requireUuid(opts.workspace, '--workspace');
      const patch = {
        views_tracking: modeOf(opts.views, '--views'),
        clicks_tracking: modeOf(opts.clicks, '--clicks'),
        retention_days: retentionOf(opts.retentionDays),
      };
      const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
      const [{ changePrivacySettings }, { privacySettings }, { recordAudit }, { withTx }] = await Promise.all([
        import('../../analytics/privacy.ts'),
        import('../../db/workspaces.ts'),
        import('../../db/audit.ts'),
        import('../../db/tx.ts'),
      ]);
      await withContext(async (ctx) => {
        const done = Object.keys(changes).length
          ? await withTx(ctx.pool, async (c) => {
              const r = await changePrivacySettings(c, id, changes);
              if (r) await recordAudit(c, id, cliActor(), { action: 'privacy_settings.update', targetKind: 'workspace', target: id, details: changes });
              return r;
            })
          : await privacySettings(ctx.pool, id).then((settings) => settings && { settings, effects: [] });
        if (!done) throw new UsageError(`--workspace: no workspace ${id}`);
        out(`views tracked    ${done.settings.views_tracking}`);
        out(`clicks tracked   ${done.settings.clicks_tracking}`);
        out(
          `retention        ${done.settings.retention_days === null ? 'the deployment default (ANALYTICS_RETENTION_DAYS)' : `${done.settings.retention_days} days`}`,
        );
        for (const e of done.effects) out(e);
      });
    });

  privacy
    .command('export')
    .description('Print everything kept about one visitor as JSON (an access request).')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<visitor>', 'the visitor id')
    .action(async (visitor: string, opts: { workspace: string }) => {
      const ws = requireUuid(opts.workspace, '--workspace');
      const id = requireUuid(visitor, '<visitor>');
      const { visitorExport } = await import('../../analytics/privacy.ts');
      await withContext(async (ctx) => {
        const data = await visitorExport(ctx.pool, ws, id);
        if (!data) throw new UsageError(`<visitor>: no visitor ${id} in workspace ${ws}`);
        out(JSON.stringify(data, null, 2));
      });
    });

  privacy
    .command('erase')
    .description('Erase one visitor with its events, the clicks it came by and the webhook events that name it.')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<visitor>', 'the visitor id')
    .action(async (visitor: string, opts: { workspace: string }) => {
      const ws = requireUuid(opts.workspace, '--workspace');
      const id = requireUuid(visitor, '<visitor>');
      const [{ eraseVisitors }, { recordAudit }, { withTx }] = await Promise.all([
        import('../../analytics/privacy.ts'),
        import('../../db/audit.ts'),
        import('../../db/tx.ts'),
      ]);
      await withContext(async (ctx) => {
        const erased = await withTx(ctx.pool, async (c) => {
          const n = await eraseVisitors(c, ws, [id]);
          if (n) await recordAudit(c, ws, cliActor(), { action: 'visitor.erase', targetKind: 'visitor', target: id });
          return n;
        });
        if (!erased) throw new UsageError(`<visitor>: no visitor ${id} in workspace ${ws}`);
        out(`erased visitor ${id} with everything tied to it`);
      });
    });
}
