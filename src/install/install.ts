/**
 * One mailbox install: the latest state of one (address, kind, integration), decided when the job
 * runs, so a burst of triggers coalesces into one install.
 *
 *   teammate and signature (highest priority wins; the others get not_supported)
 *   -> installation switched off? not_activated, no provider call
 *   -> integration without access? access_lost, no provider call
 *   -> render; destination has no slot for the kind? not_supported (multi_signatures_not_supported)
 *   -> too large for the destination (destinations.ts: the add-in's limit too)? failed (signature_too_long), before any provider call
 *   -> add-in mode? pending until the add-in fetches it
 *   -> same hash as installed and not forced? skip (no provider write)
 *   -> a turn of the integration's shared pace (src/installations/pace.ts; too far away: deferred to the queue)
 *   -> provider call -> installed | failed (event once per transition) | rate limited (rescheduled)
 */
import type { Logger } from 'pino';
import { AccessLostError, ConnectorError, MailboxError, RateLimitedError, type MailboxInstaller } from '../../connectors/types.ts';
import type { AppContext } from '../context.ts';
import { withTx } from '../db/tx.ts';
import { buildConnector, getIntegration, isAddinMode, markAccessLost, type IntegrationRow } from '../integrations/integrations.ts';
import { saveMailboxState } from '../installations/mailboxState.ts';
import { paceRateLimited, reserveTurn } from '../installations/pace.ts';
import { loadInstallInput, type InstallInput } from './load.ts';
import { renderForAddress, type RenderedForAddress } from '../analytics/addressRender.ts';
import { destinationLimit } from './destinations.ts';
import {
  currentInstallation,
  holdPendingAsAccessLost,
  stopSlot,
  transition,
  transitionInstalled,
  type FailureSubject,
  type InstallStatus,
  type Transition,
  type TransitionResult,
} from '../installations/installations.ts';
import { signatureNames } from '../signatures/queries.ts';
import type { SignatureKind } from '../domain.ts';
import type { RenderQuery, RenderSourceResult } from '../render/load.ts';

export interface InstallJob {
  workspaceId: string;
  emailId: string;
  kind: SignatureKind;
  integrationId: string;
  forced: boolean;
}

export type InstallOutcome =
  | { outcome: 'installed'; transition: TransitionResult; providerResponse: unknown; rendered: RenderedForAddress }
  | { outcome: 'unchanged'; rendered: RenderedForAddress }
  | { outcome: 'failed'; transition: TransitionResult; errorCode: string; message: string; providerResponse?: unknown; rendered?: RenderedForAddress }
  | { outcome: 'rescheduled'; retryAfterMs: number }
  | { outcome: 'deferred'; retryAfterMs: number }
  | {
      outcome: 'skipped';
      status: InstallStatus;
      reason: string;
      transition?: TransitionResult;
      rendered?: RenderedForAddress;
      errorCode?: 'signature_too_long';
      limit?: number;
    }
  | { outcome: 'dry_run'; wouldWrite: boolean; rendered: RenderedForAddress; signatureId: string };

export interface InstallOptions {
  /** Decide and render, but call no provider and change nothing. */
  dryRun?: boolean;
  /**
   * With `dryRun`: render the draft instead of the published content, as if it were published
   * (the compatibility report of a draft).
   */
  content?: 'published' | 'draft';
  /**
   * With `dryRun`: create no tracked-link or view-image rows; a link not tracked yet is written with
   * a token of the same length, so the HTML is as long as the one installed (src/install/fit.ts).
   */
  measure?: boolean;
  /** Override the signature (support replay); otherwise the highest-priority one. */
  signatureId?: string;
  logger?: Logger;
  /** Builds the installer; tests and the replay can pass their own. */
  installerFor?: (integration: IntegrationRow) => MailboxInstaller;
  /**
   * Take a turn of the integration's shared pace before the provider calls (the install task). A
   * turn further away than `maxWaitMs` is not taken: the install is `deferred` to the queue.
   */
  pace?: { maxWaitMs: number };
  /**
   * What the install reads, already read (src/install/fit.ts reads it for many mailboxes at once):
   * its input, the integration, and where the render source of (signature, teammate) comes from.
   */
  preloaded?: { input: InstallInput | undefined; integration: IntegrationRow | undefined; renderSource: (q: RenderQuery) => Promise<RenderSourceResult> };
  /** Runs the provider calls (the task caps them per integration and process). */
  limit?: <T>(integration: IntegrationRow, fn: () => Promise<T>) => Promise<T>;
}

type EmailRow = InstallInput;

/** Installers are kept per integration version, so their auth clients and tokens are reused. */
const installers = new Map<string, MailboxInstaller>();
function cachedInstaller(ctx: AppContext, integration: IntegrationRow, logger: Logger): MailboxInstaller {
  const key = `${integration.id}:${integration.updated_at.getTime()}`;
  let installer = installers.get(key);
  if (!installer) {
    for (const k of installers.keys()) if (k.startsWith(`${integration.id}:`)) installers.delete(k);
    installer = buildConnector<MailboxInstaller>(ctx, integration, logger);
    installers.set(key, installer);
  }
  return installer;
}

export async function installMailbox(ctx: AppContext, job: InstallJob, opts: InstallOptions = {}): Promise<InstallOutcome> {
  const logger = (opts.logger ?? ctx.logger).child({ emailId: job.emailId, kind: job.kind, integrationId: job.integrationId });
  const [email, integration] = opts.preloaded
    ? [opts.preloaded.input, opts.preloaded.integration]
    : await Promise.all([loadInstallInput(ctx.pool, job, opts.signatureId), getIntegration(ctx.pool, job.workspaceId, job.integrationId)]);
  if (!email || !integration) return { outcome: 'skipped', status: 'not_installed', reason: 'the address or the integration no longer exists' };

  const choices = email.choices;
  const winner = choices[0];
  const key = (signatureId: string) => ({ workspaceId: job.workspaceId, emailId: job.emailId, signatureId, kind: job.kind, integrationId: job.integrationId });

  // Nothing to install any more: a deleted teammate, or no signature assigned.
  if (email.deleted || !winner || !email.routed || integration.status === 'disconnected') {
    if (opts.dryRun) return { outcome: 'skipped', status: 'not_installed', reason: 'no signature applies to this address' };
    await stopSlot(ctx.pool, job);
    return { outcome: 'skipped', status: 'not_installed', reason: email.deleted ? 'the teammate was removed' : 'no signature applies to this address' };
  }

  // The destination holds one signature per kind: lower-priority signatures are not installed here.
  if (!opts.dryRun && !opts.signatureId && choices.length > 1) {
    await withTx(ctx.pool, async (c) => {
      for (const other of choices.slice(1)) {
        await transition(c, key(other.signature_id), {
          status: 'not_supported',
          errorCode: null,
          errorMessage: `a higher-priority signature (${winner.signature_id}) is installed in this mailbox`,
        });
      }
    });
  }

  const rendered = await renderForAddress(
    ctx,
    {
      workspaceId: job.workspaceId,
      teammateId: email.teammate_id,
      signatureId: winner.signature_id,
      kind: job.kind,
      emailId: job.emailId,
      ...(opts.dryRun ? { content: opts.content ?? 'published', measure: opts.measure ?? false } : {}),
    },
    opts.preloaded?.renderSource,
  );
  const decide = async (status: InstallStatus, reason: string, errorCode: string | null = null): Promise<InstallOutcome> => {
    if (opts.dryRun) return { outcome: 'skipped', status, reason };
    const change = { errorCode, errorMessage: errorCode ? reason : null };
    const to: Transition =
      status === 'failed' ? { status, ...change, subject: await failureSubject(ctx, email, integration, rendered) } : { status, ...change };
    const t = await withTx(ctx.pool, (c) => transition(c, key(winner.signature_id), to));
    return { outcome: 'skipped', status, reason, transition: t };
  };
  if (!rendered.installationActivated) return decide('not_activated', 'signature installation is switched off for this signature');
  if (rendered.errorCode) return decide('failed', rendered.unavailableReason ?? 'the published content no longer validates', rendered.errorCode);
  if (!rendered.available) return decide('not_supported', rendered.unavailableReason ?? 'this variant is not published');
  if (integration.status === 'access_lost') return decide('access_lost', integration.error_message ?? 'the integration lost access');

  const addin = isAddinMode(integration);
  const installer = addin ? undefined : (opts.installerFor ?? ((i) => cachedInstaller(ctx, i, logger)))(integration);
  if (installer && !installer.slots.includes(job.kind)) {
    return decide('not_supported', `${integration.kind} holds no separate ${job.kind} signature`, 'multi_signatures_not_supported');
  }
  const { limit, words } = destinationLimit(integration);
  if (rendered.html.length > limit) {
    const message = `the rendered signature is ${rendered.html.length} characters; ${words} accepts at most ${limit}`;
    if (opts.dryRun) return { outcome: 'skipped', status: 'failed', reason: message, rendered, errorCode: 'signature_too_long', limit };
    const subject = await failureSubject(ctx, email, integration, rendered);
    const t = await withTx(ctx.pool, (c) =>
      transition(c, key(winner.signature_id), { status: 'failed', errorCode: 'signature_too_long', errorMessage: message, subject }),
    );
    return { outcome: 'failed', transition: t, errorCode: 'signature_too_long', message, rendered };
  }
  if (!installer) return addinInstall(ctx, job, key(winner.signature_id), rendered, opts);

  const current = email.current;
  const unchanged = current?.status === 'installed' && current.content_hash === rendered.hash;
  if (opts.dryRun) return { outcome: 'dry_run', wouldWrite: job.forced || !unchanged, rendered, signatureId: winner.signature_id };
  if (unchanged && !job.forced) return { outcome: 'unchanged', rendered };

  return writeToProvider(ctx, { job, email, integration, installer, key: key(winner.signature_id), rendered, logger, opts });
}

interface ProviderWrite {
  job: InstallJob;
  email: EmailRow;
  integration: IntegrationRow;
  installer: MailboxInstaller;
  key: Parameters<typeof transition>[1];
  rendered: RenderedForAddress;
  logger: Logger;
  opts: InstallOptions;
}

/** The integration config's quota (write requests per second), where the customer gave it. */
function configuredQuota(integration: IntegrationRow): number | undefined {
  const q = integration.config.quota_per_s;
  return typeof q === 'number' && q > 0 ? q : undefined;
}

/** The provider call of an install, and the status its answer leads to. */
async function writeToProvider(ctx: AppContext, w: ProviderWrite): Promise<InstallOutcome> {
  const { job, email, integration, installer, key, rendered, opts } = w;
  const target = { email: email.address, aliases: email.aliases, externalId: email.external_id ?? undefined, displayName: email.display_name };
  const stateKey = { workspaceId: job.workspaceId, emailId: job.emailId, integrationId: job.integrationId };
  let newState: { value: unknown } | undefined;
  const installOpts = { force: job.forced, state: email.mailbox_state ?? undefined, onState: (value: unknown) => (newState = { value }) };
  if (opts.pace) {
    const cost = installer.quotaCostFor?.(target, installOpts) ?? 1;
    const turn = await reserveTurn(ctx.pool, stateKey, cost, { maxWaitMs: opts.pace.maxWaitMs, quotaPerSecond: configuredQuota(integration) });
    if (!turn.taken) return { outcome: 'deferred', retryAfterMs: turn.waitMs };
    if (turn.waitMs > 0) await new Promise((r) => setTimeout(r, turn.waitMs));
  }
  try {
    const call = () => installer.install(target, { html: rendered.html, text: rendered.text, hash: rendered.hash, kind: job.kind }, installOpts);
    const result = await (opts.limit ? opts.limit(integration, call) : call());
    const installed = { contentHash: rendered.hash, html: rendered.html, providerResponse: result.providerResponse };
    const state = newState;
    const t = state
      ? await withTx(ctx.pool, async (c) => {
          await saveMailboxState(c, stateKey, state.value);
          return transitionInstalled(c, key, installed);
        })
      : await transitionInstalled(ctx.pool, key, installed);
    return { outcome: 'installed', transition: t, providerResponse: result.providerResponse, rendered };
  } catch (err) {
    if (newState) await saveMailboxState(ctx.pool, stateKey, newState.value);
    return providerFailure(ctx, w, err);
  }
}

/**
 * What signature.installation.failed names, as this install read it: the signature's name is the
 * render's, or read when its content could not be loaded (invalid_content).
 */
async function failureSubject(ctx: AppContext, email: EmailRow, integration: IntegrationRow, rendered: RenderedForAddress): Promise<FailureSubject> {
  const signatureName = rendered.available
    ? rendered.signatureName
    : ((await signatureNames(ctx.pool, integration.workspace_id, [rendered.signatureId]))[0]?.name ?? '');
  return { address: email.address, teammateId: email.teammate_id, signatureName, integrationKind: integration.kind };
}

/** The status a provider error leads to; a transient one is thrown for the job runner to retry. */
async function providerFailure(ctx: AppContext, { job, email, integration, key, rendered, logger }: ProviderWrite, err: unknown): Promise<InstallOutcome> {
  if (err instanceof RateLimitedError) {
    // Every worker waits: the integration's shared pace moves past the provider's Retry-After.
    await paceRateLimited(ctx.pool, { workspaceId: job.workspaceId, integrationId: integration.id }, err.retryAfterMs);
    return { outcome: 'rescheduled', retryAfterMs: err.retryAfterMs };
  }
  if (err instanceof AccessLostError) {
    await withTx(ctx.pool, async (c) => {
      await markAccessLost(ctx, c, integration, err.message);
      await transition(c, key, { status: 'access_lost', errorCode: null, errorMessage: err.message, attempted: true });
      // Every install still waiting on this integration is held back too, with no further calls.
      await holdPendingAsAccessLost(c, integration.workspace_id, integration.id);
    });
    return { outcome: 'skipped', status: 'access_lost', reason: err.message };
  }
  const subject = await failureSubject(ctx, email, integration, rendered);
  if (err instanceof MailboxError) {
    const t = await withTx(ctx.pool, (c) => transition(c, key, { status: 'failed', errorCode: err.code, errorMessage: err.message, attempted: true, subject }));
    logger.warn({ code: err.code, err: err.message, firstFailure: t.previous !== 'failed' }, 'install failed');
    return { outcome: 'failed', transition: t, errorCode: err.code, message: err.message, rendered };
  }
  if (err instanceof ConnectorError && err.code !== 'transient') {
    const t = await withTx(ctx.pool, (c) => transition(c, key, { status: 'failed', errorCode: err.code, errorMessage: err.message, attempted: true, subject }));
    return { outcome: 'failed', transition: t, errorCode: err.code, message: err.message, rendered };
  }
  throw err; // transient: the job runner retries with backoff
}

/**
 * Add-in mode (destinations.ts): nothing is pushed. The add-in fetches the rendered signature at
 * compose time (GET /v1/addin/signature), as each published variant; until its first fetch of the
 * current version, the installation of each kind is `pending`. A signature over the add-in's
 * 30,000 characters is `failed` (`signature_too_long`) instead: the add-in would not insert it.
 */
async function addinInstall(
  ctx: AppContext,
  _job: InstallJob,
  key: Parameters<typeof transition>[1],
  rendered: RenderedForAddress,
  opts: InstallOptions,
): Promise<InstallOutcome> {
  // Every kind waits for the add-in: it inserts the reply and internal variants itself at compose time.
  const current = await currentInstallation(ctx.pool, key);
  if (current?.status === 'installed' && current.content_hash === rendered.hash) return { outcome: 'unchanged', rendered };
  const reason = 'waiting for the Outlook add-in to fetch the signature';
  if (opts.dryRun) return { outcome: 'skipped', status: 'pending', reason, rendered };
  const t = await withTx(ctx.pool, (c) => transition(c, key, { status: 'pending' }));
  return { outcome: 'skipped', status: 'pending', reason, transition: t, rendered };
}
