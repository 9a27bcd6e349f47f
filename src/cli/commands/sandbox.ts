/**
 * `sigsync sandbox`: the emulated tenants of a running `serve`, and seeding the sandbox on demand.
 *
 *   sandbox seed                                  add the "Acme" workspace (also with DATABASE_URL)
 *   sandbox state                                 what the emulated mailboxes and Slack hold
 *   sandbox directory add <email> [--name N] [--title T] [--provider google|microsoft]
 *   sandbox directory rename <email> <name>
 *   sandbox directory title <email> <title>
 *   sandbox directory remove <email>
 *
 * The directory commands talk to the control surface of the running server, found through
 * DATA_DIR/sandbox.json; after a change, `curl -X POST .../v1/integrations/sync` shows it flowing
 * into the mailboxes.
 */
import type { Command } from 'commander';
import type { SandboxRecord } from '../../sandbox/demo.ts';
import type { DirectoryChange } from '../../sandbox/tenants.ts';
import { UsageError } from '../errors.ts';
import type { SandboxState } from '../../sandbox/mailboxState.ts';
import { out } from '../../output.ts';
import { withContext } from './admin.ts';

async function runningSandbox(): Promise<SandboxRecord & { control_url: string }> {
  const [{ loadConfig }, { readSandboxRecord }] = await Promise.all([import('../../config.ts'), import('../../sandbox/demo.ts')]);
  const record = readSandboxRecord(loadConfig());
  if (!record?.control_url) throw new UsageError('no sandbox is running: start the server with `npm start` (same DATA_DIR) first');
  return { ...record, control_url: record.control_url };
}

async function control(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(`${(await runningSandbox()).control_url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new UsageError('the sandbox of the running server does not answer: is `npm start` still running with this DATA_DIR?');
  }
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new UsageError(String(json.error ?? `the sandbox answered ${res.status}`));
  return json;
}

async function change(c: DirectoryChange): Promise<void> {
  const r = await control('POST', '/_sandbox/directory', c);
  const record = await runningSandbox();
  out(String(r.message));
  out(`Run a sync to pick it up: curl -X POST -H "Authorization: Bearer ${record.api_key}" ${record.base_url ?? 'http://127.0.0.1:3000'}/v1/integrations/sync`);
}

export function sandboxCommands(program: Command): void {
  const sandbox = program.command('sandbox').description('The emulated Google, Microsoft and Slack tenants of the first-run sandbox.');

  sandbox
    .command('seed')
    .description('Seed the sandbox workspace "Acme" (its integrations point at the emulators of the next `serve` with SANDBOX=1).')
    .action(async () => {
      const [{ loadConfig }, { readSandboxRecord, writeSandboxRecord }, { seedSandbox }, { startSandboxTenants }, { workspaceExists }] = await Promise.all([
        import('../../config.ts'),
        import('../../sandbox/demo.ts'),
        import('../../sandbox/seed.ts'),
        import('../../sandbox/tenants.ts'),
        import('../../db/workspaces.ts'),
      ]);
      const config = loadConfig();
      const existing = readSandboxRecord(config);
      await withContext(async (ctx) => {
        if (existing && (await workspaceExists(ctx.pool, existing.workspace_id))) {
          out(`the sandbox workspace already exists: ${existing.workspace_id}`);
          return;
        }
        const emulators = await startSandboxTenants();
        try {
          const seeded = await seedSandbox(ctx, emulators);
          writeSandboxRecord(config, { workspace_id: seeded.workspaceId, api_key: seeded.apiKey, signature_id: seeded.signatureId });
          out(`seeded the sandbox workspace "Acme": ${seeded.workspaceId}`);
          out(`API key: ${seeded.apiKey}`);
          out(
            config.DATABASE_URL ? 'Start the server with SANDBOX=1 to run its emulated tenants.' : 'Start the server (npm start) to run its emulated tenants.',
          );
        } finally {
          await emulators.close();
        }
      });
    });

  sandbox
    .command('state')
    .description("Print what the running sandbox holds: each mailbox's signature, each Slack DM, request counts (JSON).")
    .option('--email <address>', 'only this mailbox: its Gmail and Outlook signature, its Slack DMs, its directory entries')
    .action(async (opts: { email?: string }) => {
      const state = await control('GET', '/_sandbox/state');
      if (!opts.email) return out(JSON.stringify(state, null, 2));
      const { mailboxState } = await import('../../sandbox/mailboxState.ts');
      const one = mailboxState(state as unknown as SandboxState, opts.email);
      if (!one) throw new UsageError(`--email: the sandbox has no mailbox ${opts.email} (sigsync sandbox state lists them all)`);
      out(JSON.stringify(one, null, 2));
    });

  const directory = sandbox.command('directory').description('Change the emulated directory of the running server.');
  directory
    .command('add <email>')
    .description('Add a person (Google Workspace, or Microsoft 365 for @eu.acme.test addresses).')
    .option('--name <name>', 'full name')
    .option('--title <title>', 'job title')
    .option('--provider <provider>', 'google or microsoft')
    .action(async (email: string, opts: { name?: string; title?: string; provider?: string }) => {
      if (opts.provider && opts.provider !== 'google' && opts.provider !== 'microsoft') throw new UsageError('--provider: google or microsoft');
      await change({
        action: 'add',
        email,
        ...(opts.name ? { name: opts.name } : {}),
        ...(opts.title ? { title: opts.title } : {}),
        ...(opts.provider ? { provider: opts.provider as 'google' | 'microsoft' } : {}),
      });
    });
  directory
    .command('rename <email> <name>')
    .description("Change a person's name.")
    .action(async (email: string, name: string) => change({ action: 'rename', email, name }));
  directory
    .command('title <email> <title>')
    .description("Change a person's job title.")
    .action(async (email: string, title: string) => change({ action: 'title', email, title }));
  directory
    .command('remove <email>')
    .description('Remove a person from the directory.')
    .action(async (email: string) => change({ action: 'remove', email }));
}
