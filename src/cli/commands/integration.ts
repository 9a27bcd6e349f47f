/**
 * `sigsync integration connect|reconnect|disconnect|list`: the spec has no endpoint for connecting
 * integrations, so admins do it here. Credentials are checked with one cheap provider call before
 * anything is stored, and stored encrypted.
 */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { CONNECTOR_KINDS, type ConnectorKind } from '../../../connectors/kinds.ts';
import type { AccessCheck, DirectorySource, MailboxInstaller } from '../../../connectors/types.ts';
import type { AppContext } from '../../context.ts';
import { DIRECTORY_CATEGORIES, INTEGRATION_CATEGORIES, type IntegrationCategory } from '../../domain.ts';
import type { IntegrationRow } from '../../integrations/integrations.ts';
import { UsageError } from '../errors.ts';
import { out, table } from '../../output.ts';
import { requireUuid, requireWorkspace, withContext } from './admin.ts';

const KINDS: readonly ConnectorKind[] = CONNECTOR_KINDS;

async function readJsonFile(file: string, flag: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new UsageError(`${flag}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${flag}: ${file} is not valid JSON`);
  }
}

/**
 * What --credentials-file holds: the credentials themselves, or `{"credentials": {...}, "config":
 * {...}}` (one file with both, as docs/microsoft-and-slack.md shows). A config given both there and
 * with --config is refused rather than merged.
 */
export function splitCredentialsFile(parsed: unknown, configFlag: boolean): { credentials: unknown; config?: Record<string, unknown> } {
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(parsed) || !isObject(parsed.credentials) || Object.keys(parsed).some((k) => k !== 'credentials' && k !== 'config'))
    return { credentials: parsed };
  if (parsed.config === undefined) return { credentials: parsed.credentials };
  if (!isObject(parsed.config)) throw new UsageError('--credentials-file: "config" must be a JSON object');
  if (configFlag) throw new UsageError('--credentials-file: holds a "config" and --config gives another; put the config in one place');
  return { credentials: parsed.credentials, config: parsed.config };
}

/** Network failures that mean the provider's host was not reached (no answer came back). */
const UNREACHABLE = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENETDOWN)\b/;

function unreachable(e: Error): string | undefined {
  for (let c: unknown = e; c instanceof Error; c = c.cause) {
    const code = (c as NodeJS.ErrnoException).code;
    const found = (typeof code === 'string' && UNREACHABLE.test(code) ? code : undefined) ?? UNREACHABLE.exec(c.message)?.[1];
    if (found) return found;
  }
  return undefined;
}

/**
 * One cheap provider call with the given credentials; a rejection is explained and nothing is
 * stored. Directory sources and the mailbox installers that can (Gmail) check without writing to a
 * mailbox; the answer says what was not checked: the credentials of the others (proven by their
 * first install or photo sync), or what the check could not prove.
 */
async function checkCredentials(
  ctx: AppContext,
  kind: ConnectorKind,
  category: IntegrationCategory,
  credentials: unknown,
  config: unknown,
): Promise<AccessCheck> {
  const [{ IntegrationSetupError, validateSetup }, { ConnectorError }, { integrationUrlPolicy, IntegrationUrlError, validateIntegrationUrls }] =
    await Promise.all([import('../../integrations/integrations.ts'), import('../../../connectors/types.ts'), import('../../integrations/urls.ts')]);
  const logger = ctx.logger;
  const urlPolicy = integrationUrlPolicy(ctx.config);
  let setup;
  try {
    setup = validateSetup(kind, category, credentials, config, urlPolicy);
    // base_url and token_url, with every address their host names resolve to.
    await validateIntegrationUrls(setup.config, urlPolicy);
  } catch (e) {
    if (e instanceof IntegrationSetupError || e instanceof IntegrationUrlError) throw new UsageError(e.message);
    throw e;
  }
  const connector = setup.def.create({ config: setup.config, credentials: setup.credentials, logger, urlPolicy });
  let check: (() => Promise<AccessCheck>) | undefined;
  if (DIRECTORY_CATEGORIES.includes(category)) {
    check = async () => {
      await (connector as DirectorySource).checkAccess();
      return { unchecked: null };
    };
  } else if (category === 'signatures') {
    const installer = connector as MailboxInstaller;
    if (installer.checkAccess) check = () => installer.checkAccess!();
  }
  if (!check) return { unchecked: NOT_CHECKED };
  try {
    return await check();
  } catch (e) {
    if (e instanceof ConnectorError) {
      const network = e.code === 'transient' ? unreachable(e) : undefined;
      if (network)
        throw new UsageError(
          `could not reach the provider to check these credentials (${network}); nothing was stored. Check this host's network and DNS, or the config's base_url and token_url`,
        );
      throw new UsageError(`the provider refused these credentials (${e.code}): ${e.message}`);
    }
    throw e;
  }
}

/** What is said of credentials that no cheap call can check. */
const NOT_CHECKED =
  'the credentials: this integration has no call that proves them without acting on a mailbox; its first install or photo sync does (sigsync install replay --email ADDRESS)';

async function loadIntegration(ctx: AppContext, id: string): Promise<IntegrationRow> {
  const { integrationById } = await import('../../integrations/queries.ts');
  const row = await integrationById(ctx.pool, id);
  if (!row) throw new UsageError(`no integration ${id}`);
  return row;
}

interface ConnectOptions {
  workspace: string;
  kind: string;
  category: string;
  credentialsFile: string;
  config?: string;
  name?: string;
}

async function connect(opts: ConnectOptions): Promise<void> {
  const workspaceId = requireUuid(opts.workspace, '--workspace');
  if (!KINDS.includes(opts.kind as ConnectorKind)) throw new UsageError(`--kind: expected one of ${KINDS.join(', ')}`);
  if (!INTEGRATION_CATEGORIES.includes(opts.category as IntegrationCategory))
    throw new UsageError(`--category: expected one of ${INTEGRATION_CATEGORIES.join(', ')}`);
  const kind = opts.kind as ConnectorKind;
  const category = opts.category as IntegrationCategory;
  const file = splitCredentialsFile(await readJsonFile(opts.credentialsFile, '--credentials-file'), opts.config !== undefined);
  const credentials = file.credentials;
  const config = (opts.config ? await readJsonFile(opts.config, '--config') : (file.config ?? {})) as Record<string, unknown>;
  const [{ withTx }, { insertIntegration }] = await Promise.all([import('../../db/tx.ts'), import('../../integrations/integrations.ts')]);
  await withContext(async (ctx) => {
    await requireWorkspace(ctx, workspaceId);
    const { unchecked } = await checkCredentials(ctx, kind, category, credentials, config);
    const row = await withTx(ctx.pool, (client) =>
      insertIntegration(ctx, client, { workspaceId, kind, category, name: opts.name ?? `${kind} ${category}`, credentials, config }),
    );
    out(`integration ${row.id} connected (${row.kind}, ${row.category}), status ${row.status}`);
    if (unchecked) out(`not checked: ${unchecked}`);
  });
}

export function integrationCommands(program: Command): void {
  const integration = program.command('integration').description('Connect and manage provider integrations.');

  integration
    .command('connect')
    .description('Check credentials with the provider, store them encrypted, and activate the integration.')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--kind <kind>', `provider: ${KINDS.join(', ')}`)
    .requiredOption('--category <category>', `what it is used for: ${INTEGRATION_CATEGORIES.join(', ')}`)
    .requiredOption(
      '--credentials-file <file>',
      'JSON credentials (service-account key, client secret, bot token...), or {"credentials": {...}, "config": {...}}',
    )
    .option('--config <file>', 'JSON config: base_url, token_url, scope, smart-field settings...')
    .option('--name <name>', 'a display name')
    .action(connect);

  integration
    .command('reconnect')
    .description('Replace the credentials of an integration; returns it to active and re-arms access-lost alerts.')
    .argument('<id>', 'integration id')
    .requiredOption('--credentials-file <file>', 'JSON credentials')
    .action(async (id: string, opts: { credentialsFile: string }) => {
      const integrationId = requireUuid(id, 'id');
      const file = splitCredentialsFile(await readJsonFile(opts.credentialsFile, '--credentials-file'), false);
      if (file.config)
        throw new UsageError('--credentials-file: reconnect replaces the credentials only; remove "config" from the file (the integration keeps its config)');
      const credentials = file.credentials;
      const [{ withTx }, { updateCredentials }, { startRuns }] = await Promise.all([
        import('../../db/tx.ts'),
        import('../../integrations/integrations.ts'),
        import('../../integrations/syncRuns.ts'),
      ]);
      await withContext(async (ctx) => {
        const current = await loadIntegration(ctx, integrationId);
        const { unchecked } = await checkCredentials(ctx, current.kind, current.category, credentials, current.config);
        const { row, wasLost } = await withTx(ctx.pool, (client) => updateCredentials(ctx, client, current, credentials));
        out(`integration ${row.id} reconnected, status ${row.status}${wasLost ? ' (access restored)' : ''}`);
        if (unchecked) out(`not checked: ${unchecked}`);
        if (DIRECTORY_CATEGORIES.includes(row.category)) {
          const runs = await startRuns(ctx.pool, row.workspace_id, [row.id], { trigger: 'reconnect' });
          for (const r of runs) out(`sync run ${r.id} started`);
        }
      });
    });

  integration
    .command('disconnect')
    .description('Disconnect an integration: its syncs and installs stop.')
    .argument('<id>', 'integration id')
    .action(async (id: string) => {
      const integrationId = requireUuid(id, 'id');
      const [{ withTx }, { markDisconnected }] = await Promise.all([import('../../db/tx.ts'), import('../../integrations/integrations.ts')]);
      await withContext(async (ctx) => {
        const current = await loadIntegration(ctx, integrationId);
        const changed = await withTx(ctx.pool, (client) => markDisconnected(client, current));
        out(changed ? `integration ${current.id} disconnected` : `integration ${current.id} was already disconnected`);
      });
    });

  integration
    .command('list')
    .description('List integrations with their status.')
    .option('--workspace <id>', 'only this workspace')
    .action(async (opts: { workspace?: string }) => {
      const workspaceId = opts.workspace ? requireUuid(opts.workspace, '--workspace') : null;
      await withContext(async (ctx) => {
        const { integrationsForOperator } = await import('../../integrations/queries.ts');
        table(await integrationsForOperator(ctx.pool, workspaceId), ['id', 'workspace', 'kind', 'category', 'name', 'status', 'error', 'error_since']);
      });
    });
}
