/**
 * The first-run demo of `serve`: starts the emulated tenants in-process (emulators/acme.ts, loaded
 * by tenants.ts), seeds the "Acme" workspace
 * into an empty database (or points an already seeded one at the new emulators), then runs the
 * product through its own API — sync, assign, publish — and tells what happened: teammates synced,
 * smart-field values mapped, signatures installed, the failure and its reason; then it follows
 * tracked links of one installed signature and records a conversion (analyticsDemo.ts). It ends with
 * the API key, the base URL, curl commands to try and a sign-in link to the console.
 *
 * A control surface on loopback lets the CLI (`sigsync sandbox ...`) and tests see and change the
 * emulated tenants of the running server:
 *   GET  /_sandbox/state      each mailbox's signature (Gmail, Outlook), each Slack DM, request counts
 *   POST /_sandbox/directory  {"action":"add"|"rename"|"remove"|"title", "email", "name"?, "title"?, "provider"?}
 * Its address, the workspace and the sandbox API key are kept in DATA_DIR/sandbox.json (mode 0600).
 * Directory changes made through it are appended to DATA_DIR/sandbox-directory.json and applied again
 * to the fresh emulators of the next start, so people added by hand survive a restart (and are not
 * removed by the next sync).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Logger } from 'pino';
import type { App } from '../app.ts';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import { prepareDataDir } from '../dataDir.ts';
import { out } from '../output.ts';
import { sandboxEnabled } from './mode.ts';
import { createSignInLink } from '../console/sessions.ts';
import { createApiKey } from '../db/apiKeys.ts';
import { directoryFieldCount } from '../db/smartFields.ts';
import { hasWorkspaces, workspaceExists } from '../db/workspaces.ts';
import { countsByIntegration, listInstallations } from '../installations/queries.ts';
import { integrationNames, latestRunId } from '../integrations/queries.ts';
import { smartFieldValueCount } from '../teammates/queries.ts';
import type { ServerRoutes } from '../api/server.ts';
import { OUTLOOK_DEMO_PATH, outlookDemoRoutes, type OutlookDemoSetup } from './outlookDemo.ts';
import { ApiClient, waitForIdle, waitForRuns } from './flow.ts';
import { runAnalyticsStory, type AnalyticsDemoResult } from './analyticsDemo.ts';
import { connectSandboxBilling } from './billing.ts';
import { everyoneGroups, loadAcme, repointSandbox, seedSandbox } from './seed.ts';
import { startSandboxTenants, type DirectoryChange, type SandboxTenants } from './tenants.ts';

export interface SandboxRecord {
  workspace_id: string;
  api_key: string;
  /** The add-in key (key-only mode) the compose-window demo's add-in fetches with. */
  addin_key?: string;
  signature_id: string;
  /** The running server's control surface, while it runs. */
  control_url?: string;
  base_url?: string;
}

export const sandboxFile = (config: Pick<Config, 'DATA_DIR'>) => path.join(config.DATA_DIR, 'sandbox.json');
export const directoryJournal = (config: Pick<Config, 'DATA_DIR'>) => path.join(config.DATA_DIR, 'sandbox-directory.json');

/** The directory changes made by hand so far, oldest first. */
export function readDirectoryChanges(config: Pick<Config, 'DATA_DIR'>): DirectoryChange[] {
  try {
    return JSON.parse(fs.readFileSync(directoryJournal(config), 'utf8')) as DirectoryChange[];
  } catch {
    return [];
  }
}

function recordDirectoryChange(config: Pick<Config, 'DATA_DIR'>, change: DirectoryChange): void {
  const all = [...readDirectoryChanges(config), change];
  fs.writeFileSync(directoryJournal(config), JSON.stringify(all, null, 2) + '\n', { mode: 0o600 });
}

/** Applies the recorded changes to fresh emulators; answers how many applied. */
function restoreDirectoryChanges(config: Pick<Config, 'DATA_DIR'>, e: SandboxTenants, log: Logger): number {
  let applied = 0;
  for (const c of readDirectoryChanges(config)) {
    try {
      e.changeDirectory(c);
      applied++;
    } catch (err) {
      log.warn({ change: c }, `a recorded directory change no longer applies: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return applied;
}

export function readSandboxRecord(config: Pick<Config, 'DATA_DIR'>): SandboxRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(sandboxFile(config), 'utf8')) as SandboxRecord;
  } catch {
    return undefined;
  }
}

export function writeSandboxRecord(config: Pick<Config, 'DATA_DIR'>, record: SandboxRecord): void {
  prepareDataDir(config.DATA_DIR);
  fs.writeFileSync(sandboxFile(config), JSON.stringify(record, null, 2) + '\n', { mode: 0o600 });
}

export { sandboxEnabled };

/**
 * The compose-window demo's people: a Microsoft 365 person composing, the shared mailbox, a
 * colleague and someone outside; undefined until the sandbox workspace has its add-in key.
 */
function outlookDemoSetup(config: Pick<Config, 'DATA_DIR'>): OutlookDemoSetup | undefined {
  const record = readSandboxRecord(config);
  if (!record?.addin_key) return undefined;
  const acme = loadAcme();
  const [user, colleague] = acme.people.filter((p) => p.provider === 'microsoft');
  const shared = acme.shared_mailboxes[0];
  if (!user || !colleague || !shared) return undefined;
  return { key: record.addin_key, user: user.email, shared: shared.email, internal: colleague.email, external: 'ana.silva@client.example' };
}

/** Routes `serve` adds to the server: the sandbox's demo pages, in sandbox mode only. */
export function sandboxServerRoutes(config: Pick<Config, 'SANDBOX' | 'DATABASE_URL' | 'DATA_DIR'>): ServerRoutes[] {
  return sandboxEnabled(config) ? [outlookDemoRoutes(() => outlookDemoSetup(config))] : [];
}

async function startControl(e: SandboxTenants, onChange: (c: DirectoryChange) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        if (req.method === 'GET' && req.url === '/_sandbox/state') return reply(200, e.state());
        if (req.method === 'POST' && req.url === '/_sandbox/directory') {
          const change = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as DirectoryChange;
          if (!['add', 'rename', 'remove', 'title'].includes(change.action) || typeof change.email !== 'string')
            return reply(400, { error: 'expected {"action":"add|rename|remove|title","email":...}' });
          const message = e.changeDirectory(change);
          onChange(change);
          return reply(200, { ok: true, message });
        }
        reply(404, { error: `no route ${req.method} ${req.url}` });
      } catch (err) {
        reply(422, { error: err instanceof Error ? err.message : String(err) });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The story of the first run: sync, map, assign, publish, install. */
export async function runStory(ctx: AppContext, log: Logger, api: ApiClient, workspaceId: string, signatureId: string, restarted: boolean): Promise<void> {
  const runs = await waitForRuns(ctx.pool, await api.sync());
  const synced = runs.reduce((n, r) => n + r.seen, 0);
  log.info(
    { runs: runs.map((r) => ({ integration: r.integration, status: r.status, seen: r.seen })) },
    `synced ${synced} teammates (${runs.map((r) => `${r.integration}: ${r.seen}`).join(', ')})`,
  );
  for (const r of runs.filter((x) => x.status !== 'succeeded')) log.warn({ run: r.id }, `${r.integration} sync ${r.status}: ${r.error ?? ''}`);
  const values = await smartFieldValueCount(ctx.pool, workspaceId);
  const fields = await directoryFieldCount(ctx.pool, workspaceId);
  log.info(`mapped ${values} smart-field values from ${fields} directory attributes (name, job title, phone)`);
  const groups = await everyoneGroups(ctx, workspaceId);
  await api.assignGroups(signatureId, groups);
  await api.publish(signatureId);
  // Fresh emulators start with empty mailboxes, while the installations remember what was written before.
  if (restarted) await api.reinstall(signatureId);
  log.info(`assigned the "Acme standard" signature to ${groups.length} all-staff groups and published it`);
  await waitForIdle(ctx.pool);
  const { installed, waiting } = await installsByIntegration(ctx, workspaceId);
  log.info(
    `installed ${installed.reduce((n, r) => n + r.n, 0)} signatures (${installed.map((r) => `${r.name}: ${r.n}`).join(', ')}), each with the campaign banner`,
  );
  // Outlook is in add-in mode, as in a default tenant: nothing is pushed, the add-in fetches at compose time.
  for (const w of waiting)
    log.info(
      `${w.n} mailboxes in ${w.name} wait for the Outlook add-in: pending until it fetches their signature at compose time (the compose-window demo below), then installed per platform`,
    );
  const failures = (await listInstallations(ctx.pool, workspaceId, { limit: 1000, offset: 0 }, { status: 'failed' })).rows;
  for (const f of failures.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0)))
    log.warn(`1 install failed: ${f.address} in ${f.integration_name}: ${f.error_message ?? 'unknown reason'}`);
}

/**
 * The installed signatures and the mailboxes waiting (pending) per integration, by the
 * integration's name as the database orders it.
 */
async function installsByIntegration(
  ctx: AppContext,
  workspaceId: string,
): Promise<{ installed: { name: string; n: number }[]; waiting: { name: string; n: number }[] }> {
  const counts = await countsByIntegration(ctx.pool, workspaceId);
  const integrations = await integrationNames(ctx.pool, workspaceId, [...new Set(counts.map((c) => c.integration_id))]);
  const sum = (status: string, of: (c: (typeof counts)[number]) => number) =>
    integrations
      .map((i) => ({ name: i.name, n: counts.filter((c) => c.integration_id === i.id && c.status === status).reduce((n, c) => n + of(c), 0) }))
      .filter((r) => r.n > 0);
  return { installed: sum('installed', (c) => c.installs), waiting: sum('pending', (c) => c.mailboxes) };
}

/**
 * How the welcome's commands run the CLI, to be copied into a shell in the project directory: with
 * this server's DATA_DIR in front when it is not the default `.data` there (without it, the copied
 * command would open another, empty data directory).
 */
export function cliCommand(dataDir: string, defaultDir = path.resolve('.data')): string {
  if (path.resolve(dataDir) === defaultDir) return './bin/sigsync.js';
  const quoted = /^[\w@%+=:,./-]+$/.test(dataDir) ? dataDir : `'${dataDir.replace(/'/g, `'\\''`)}'`;
  return `DATA_DIR=${quoted} ./bin/sigsync.js`;
}

function printWelcome(
  cli: string,
  workspaceId: string,
  baseUrl: string,
  key: string,
  controlUrl: string,
  runId: string | undefined,
  clicked: AnalyticsDemoResult | undefined,
  signInToken: string,
  addinKey: string | undefined,
): void {
  const lines = [
    '',
    'Sandbox workspace "Acme" is ready.',
    `  Workspace id: ${workspaceId}`,
    `  API base URL: ${baseUrl}`,
    `  API key:      ${key}`,
    `  Inspect the emulated mailboxes: ${controlUrl}/_sandbox/state`,
    '',
    'Open the console (integrations, mailboxes, analytics) in a browser; this sign-in link works once, within 15 minutes:',
    `  ${baseUrl}/console/sign-in?token=${signInToken}`,
    `  (another one: ${cli} console link --workspace ${workspaceId})`,
    '',
    'Try:',
    `  curl -H "Authorization: Bearer ${key}" ${baseUrl}/v1/teammates`,
    `  curl -X POST -H "Authorization: Bearer ${key}" ${baseUrl}/v1/integrations/sync`,
    runId
      ? `  curl -H "Authorization: Bearer ${key}" ${baseUrl}/v1/integrations/sync/${runId}`
      : `  curl -H "Authorization: Bearer ${key}" ${baseUrl}/v1/integrations`,
    '',
    ...(clicked
      ? [
          `Read the clicks and the conversion the demo made from ${clicked.address}'s signature (reports roll up every minute):`,
          `  curl -H "Authorization: Bearer ${key}" ${baseUrl}/v1/analytics/overview`,
          '',
        ]
      : []),
    'Change the emulated directory, then sync again (changes are kept across restarts):',
    `  ${cli} sandbox directory title priya.natarajan@acme.test "Head of Sales"`,
    `  ${cli} sync --workspace ${workspaceId} --follow`,
    '',
    'The Outlook add-in (docs/outlook-addin.md): its manifest, to deploy from the Microsoft 365 admin center',
    // The sandbox has no Entra app: its manifest is key-only (a manifest that cannot sign in is not served).
    `  ${baseUrl}/addin/manifest.xml?key=${addinKey ?? 'ADDIN_KEY'}   (or ${cli} addin manifest --key ...; Outlook needs PUBLIC_BASE_URL on https)`,
    'and the add-in at work in a stand-in Outlook compose window (add recipients, switch From to the shared mailbox, reply):',
    `  ${baseUrl}${OUTLOOK_DEMO_PATH}`,
    '',
    'Receive its events on a loopback receiver (sandbox mode allows http on 127.0.0.1):',
    `  ${cli} webhook add --workspace ${workspaceId} --url http://127.0.0.1:8080/hooks`,
    '',
  ];
  for (const l of lines) out(l);
}

/**
 * Runs the sandbox beside a started app when enabled; answers the app with a `stop` that also stops
 * the emulators. A failure of the demo is logged and the server keeps running.
 */
export async function withSandbox(app: App): Promise<App> {
  const { ctx } = app;
  if (!sandboxEnabled(ctx.config) || !app.url) return app;
  const log = ctx.logger.child({ component: 'sandbox' });
  const emulators = await startSandboxTenants();
  const control = await startControl(emulators, (c) => recordDirectoryChange(ctx.config, c));
  const stop = app.stop.bind(app);
  const wrapped: App = {
    ...app,
    stop: async () => {
      await stop();
      await control.close();
      await emulators.close();
    },
  };
  log.info(
    `started the emulated tenants: Google Workspace at ${emulators.google.url}, Microsoft 365 at ${emulators.microsoft.url} (HTTPS, its own certificate), Slack at ${emulators.slack.url}`,
  );
  log.info(`started the emulated payment provider (Stripe) at ${emulators.stripe.url}`);
  try {
    let record = readSandboxRecord(ctx.config);
    let restarted = false;
    const exists = record && (await workspaceExists(ctx.pool, record.workspace_id));
    if (record && exists) {
      // Before the integrations point at the emulators: a sync that repointing starts must see them.
      const restored = restoreDirectoryChanges(ctx.config, emulators, log);
      await repointSandbox(ctx, record.workspace_id, emulators);
      restarted = true;
      log.info('pointed the sandbox workspace "Acme" at the new emulators');
      if (restored) log.info(`restored ${restored} directory change(s) made with sigsync sandbox directory (kept in ${directoryJournal(ctx.config)})`);
    } else if (!ctx.config.DATABASE_URL && !(await hasWorkspaces(ctx.pool))) {
      const acme = loadAcme();
      // A new sandbox workspace starts from the fixture's directory.
      fs.rmSync(directoryJournal(ctx.config), { force: true });
      const seeded = await seedSandbox(ctx, emulators, acme);
      record = { workspace_id: seeded.workspaceId, api_key: seeded.apiKey, signature_id: seeded.signatureId };
      const google = acme.people.filter((p) => p.provider === 'google').length;
      log.info(
        `seeded the sandbox workspace "Acme": ${acme.people.length} people (${google} on Google Workspace, ${acme.people.length - google} on Microsoft 365, everyone in Slack), the shared mailbox ${acme.shared_mailboxes.map((m) => m.email).join(', ')} on Microsoft 365, the "Acme standard" signature and the "${acme.campaign.name}" campaign banner`,
      );
    } else {
      log.info('the database already holds workspaces: the sandbox is not seeded (run `sigsync sandbox seed` to add it)');
      record = undefined;
    }
    if (record && record.signature_id) {
      // The compose-window demo's add-in fetches with a key of its own (a sandbox seeded before it had none gets one).
      record.addin_key ??= (await createApiKey(ctx.pool, record.workspace_id, 'sandbox Outlook add-in', 'addin')).key;
      writeSandboxRecord(ctx.config, { ...record, control_url: control.url, base_url: app.url });
      await connectSandboxBilling(ctx, log, record.workspace_id, emulators.stripe);
      const api = new ApiClient(app.url, record.api_key);
      await runStory(ctx, log, api, record.workspace_id, record.signature_id, restarted);
      const clicked = await runAnalyticsStory(ctx, log, api, record.workspace_id, emulators.google.signatures());
      const lastRunId = await latestRunId(ctx.pool, record.workspace_id);
      const signIn = await createSignInLink(ctx.pool, record.workspace_id, 'sandbox');
      printWelcome(
        cliCommand(ctx.config.DATA_DIR),
        record.workspace_id,
        app.url,
        record.api_key,
        control.url,
        lastRunId,
        clicked,
        signIn.token,
        record.addin_key,
      );
    }
  } catch (err) {
    log.error({ err }, 'the sandbox demo failed; the server keeps running');
  }
  return wrapped;
}
