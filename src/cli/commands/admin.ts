/**
 * Administrative one-shot commands (workspaces and API keys), and what every command shares:
 * `withContext`, `requireUuid` and `requireWorkspace`.
 *
 * Command modules import only what defining the command needs (commander, output, errors); the
 * work is imported inside each action, so that `sigsync --help` and a command that only queries the
 * database do not load the HTTP server, the worker or the provider SDKs.
 */
import os from 'node:os';
import type { Command } from 'commander';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../db/audit.ts';
import { out } from '../../output.ts';
import { UsageError } from '../errors.ts';

/** Opens the database for one command (starting embedded Postgres only if none runs) and closes it after. */
export async function withContext<T>(fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const [{ loadConfig }, { createLogger }, { openContext }, { anyStoredCredential }, { pino }] = await Promise.all([
    import('../../config.ts'),
    import('../../log.ts'),
    import('../../db/openContext.ts'),
    import('../../integrations/queries.ts'),
    import('pino'),
  ]);
  const config = loadConfig();
  // One-shot commands print results on stdout; their logs go to stderr, quietly by default.
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', pino.destination(2));
  const { ctx, close } = await openContext(config, logger, { storedCredential: anyStoredCredential });
  try {
    return await fn(ctx);
  } finally {
    await close();
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The audit trail's actor of a CLI command: the user who ran it, as `cli:USER`. */
export function cliActor(): Actor {
  return { kind: 'cli', name: `cli:${os.userInfo().username}` };
}

export function requireUuid(value: string, flag: string): string {
  if (!UUID.test(value)) throw new UsageError(`${flag}: expected an id such as 0b5c9a2e-...; got "${value}"`);
  return value.toLowerCase();
}

/** Refuses a `--workspace` that names no workspace: `--workspace: no workspace ID`, a usage error. */
export async function requireWorkspace(ctx: AppContext, workspaceId: string): Promise<void> {
  const { workspaceExists } = await import('../../db/workspaces.ts');
  if (!(await workspaceExists(ctx.pool, workspaceId))) throw new UsageError(`--workspace: no workspace ${workspaceId}`);
}

export function adminCommands(program: Command): void {
  const workspace = program.command('workspace').description('Manage workspaces.');
  workspace
    .command('create')
    .description('Create a workspace and its first API key (printed once).')
    .requiredOption('--name <name>', 'workspace name')
    .action(async (opts: { name: string }) => {
      const [{ createWorkspace }, { createApiKey }] = await Promise.all([import('../../db/workspaces.ts'), import('../../db/apiKeys.ts')]);
      await withContext(async (ctx) => {
        const ws = await createWorkspace(ctx.pool, opts.name);
        const key = await createApiKey(ctx.pool, ws.id);
        out(`workspace ${ws.id} (${ws.name})`);
        out(`api key   ${key.key}`);
        out('The key is shown only this once; store it now.');
      });
    });

  workspace
    .command('tracking')
    .description('Switch event tracking (tracked links, click and event recording) on or off; published signatures are installed again.')
    .requiredOption('--workspace <id>', 'workspace id')
    .argument('<state>', 'on or off')
    .action(async (state: string, opts: { workspace: string }) => {
      const id = requireUuid(opts.workspace, '--workspace');
      if (state !== 'on' && state !== 'off') throw new UsageError(`<state>: on or off; got "${state}"`);
      const { switchEventTracking } = await import('../../analytics/tracking.ts');
      await withContext(async (ctx) => {
        await requireWorkspace(ctx, id);
        const changed = await switchEventTracking(ctx.pool, id, state === 'on');
        out(changed ? `event tracking is ${state}; published signatures are being installed again` : `event tracking was already ${state}`);
      });
    });

  workspace
    .command('analytics')
    .description('Show or change the analytics settings: browser values, attribution window, conversions per click (docs/analytics.md).')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--browser-values <state>', 'on: a value sent by the browser script counts as money; off (the default): it does not')
    .option('--browser-value-cap <amount>', 'the largest browser value that counts (default 1000)')
    .option('--attribution-window-days <days>', 'a click attributes events within this many days of it, 1 to 365 (default 30)')
    .option('--conversions-per-click <n>', 'conversions one click id attributes at most, 1 to 1000 (default 1)')
    .action(
      async (opts: { workspace: string; browserValues?: string; browserValueCap?: string; attributionWindowDays?: string; conversionsPerClick?: string }) => {
        const id = requireUuid(opts.workspace, '--workspace');
        const patch = analyticsPatch(opts);
        const { analyticsSettings, updateAnalyticsSettings } = await import('../../db/workspaces.ts');
        await withContext(async (ctx) => {
          const s = Object.keys(patch).length ? await updateAnalyticsSettings(ctx.pool, id, patch) : await analyticsSettings(ctx.pool, id);
          if (!s) throw new UsageError(`--workspace: no workspace ${id}`);
          out(`browser values          ${s.browser_values_enabled ? 'on' : 'off'} (cap ${s.browser_value_cap})`);
          out(`attribution window      ${s.attribution_window_days} days`);
          out(`conversions per click   ${s.conversions_per_click}`);
        });
      },
    );
  apikeyCommands(program);
}

/** `sigsync apikey create`: another API key for a workspace, audited in the key's transaction. */
function apikeyCommands(program: Command): void {
  const apikey = program.command('apikey').description('Manage API keys.');
  apikey
    .command('create')
    .description('Create another API key for a workspace (printed once).')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--name <name>', 'a label for the key', 'default')
    .option('--addin', 'a key for the Outlook add-in: it can only fetch rendered signatures')
    .action(async (opts: { workspace: string; name: string; addin?: boolean }) => {
      const id = requireUuid(opts.workspace, '--workspace');
      const { createApiKey } = await import('../../db/apiKeys.ts');
      const { recordAudit } = await import('../../db/audit.ts');
      const { withTx } = await import('../../db/tx.ts');
      await withContext(async (ctx) => {
        await requireWorkspace(ctx, id);
        const scope = opts.addin ? 'addin' : 'api';
        // The key and its audit entry in one transaction.
        const key = await withTx(ctx.pool, async (c) => {
          const created = await createApiKey(c, id, opts.name, scope);
          await recordAudit(c, id, cliActor(), {
            action: 'api_key.create',
            targetKind: 'api_key',
            target: `${opts.name} (${created.prefix})`,
            details: { key_id: created.id, scope },
          });
          return created;
        });
        out(`${opts.addin ? 'add-in key' : 'api key'} ${key.key}`);
        out('The key is shown only this once; store it now.');
      });
    });
}

/** The settings the analytics options name, checked (the database checks the same bounds). */
function analyticsPatch(opts: { browserValues?: string; browserValueCap?: string; attributionWindowDays?: string; conversionsPerClick?: string }) {
  const patch: { browser_values_enabled?: boolean; browser_value_cap?: number; attribution_window_days?: number; conversions_per_click?: number } = {};
  const int = (v: string, flag: string, min: number, max: number) => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`${flag}: an integer from ${min} to ${max}; got "${v}"`);
    return Number(v);
  };
  if (opts.browserValues !== undefined) {
    if (opts.browserValues !== 'on' && opts.browserValues !== 'off') throw new UsageError(`--browser-values: on or off; got "${opts.browserValues}"`);
    patch.browser_values_enabled = opts.browserValues === 'on';
  }
  if (opts.browserValueCap !== undefined) {
    const cap = Number(opts.browserValueCap);
    if (!/^\d+(\.\d+)?$/.test(opts.browserValueCap) || cap > 1e12)
      throw new UsageError(`--browser-value-cap: a number from 0 to 1000000000000; got "${opts.browserValueCap}"`);
    patch.browser_value_cap = cap;
  }
  if (opts.attributionWindowDays !== undefined) patch.attribution_window_days = int(opts.attributionWindowDays, '--attribution-window-days', 1, 365);
  if (opts.conversionsPerClick !== undefined) patch.conversions_per_click = int(opts.conversionsPerClick, '--conversions-per-click', 1, 1000);
  return patch;
}
