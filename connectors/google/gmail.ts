/**
 * Gmail signature installer (category `signatures`).
 *
 * Acts as the mailbox user through domain-wide delegation (the service account's JWT subject is
 * the mailbox address), lists the user's send-as addresses, then patches `signature` on:
 * - the primary send-as address;
 * - the target address itself and each of `target.aliases`, when Gmail lists it as a send-as
 *   address that is verified (`verificationStatus: accepted`) or primary.
 * Other send-as addresses (pending verification, or unknown to the directory) are left alone
 * and reported in the provider response.
 *
 * Gmail keeps one signature per send-as address and cannot name signatures or pick one for
 * replies, so the only slot is `primary`. Gmail rejects signatures over 10,000 characters; the
 * installer checks that before any call. Gmail sanitises the HTML it stores, and a new signature
 * can take a while to show in an open Gmail session.
 */
import { gmail, type gmail_v1 } from '@googleapis/gmail';
import type { Logger } from 'pino';
import {
  InvalidResponseError,
  MailboxError,
  defineMailboxInstaller,
  parseProvider,
  type ConnectorContext,
  type InstallOptions,
  type InstallResult,
  type MailboxInstaller,
  type MailboxTarget,
  type RenderedSignature,
} from '../types.ts';
import { credentialSecrets, gmailCredentialsSchema, secretRedactor, serviceAccountClient, type GmailCredentials, type Redactor } from './auth.ts';
import { apiOptions, googleConfigSchema, type GoogleConfig } from './config.ts';
import { call, type MapOptions } from './errors.ts';
import { GmailSendAs, GmailSendAsList } from './schemas.ts';

/** Reading and writing send-as settings (signatures). */
export const GMAIL_SCOPES = ['https://www.googleapis.com/auth/gmail.settings.basic'] as const;

/** Gmail's limit on a signature, HTML included. */
export const GMAIL_MAX_SIGNATURE_LENGTH = 10_000;

/** Auth clients kept per mailbox, so a burst of installs for one user reuses its token. */
const CLIENT_CACHE_SIZE = 64;

type Ctx = ConnectorContext<GoogleConfig, GmailCredentials>;

/** What the support replay sees of a send-as address: no SMTP relay settings. */
function publicSendAs(s: GmailSendAs) {
  return {
    sendAsEmail: s.sendAsEmail,
    displayName: s.displayName ?? null,
    isPrimary: s.isPrimary === true,
    isDefault: s.isDefault === true,
    verificationStatus: s.verificationStatus ?? null,
    signature: s.signature ?? null,
  };
}

export class GmailInstaller implements MailboxInstaller {
  readonly slots = ['primary'] as const;
  readonly maxHtmlLength = GMAIL_MAX_SIGNATURE_LENGTH;
  readonly #ctx: Ctx;
  readonly #logger: Logger;
  readonly #redact: Redactor;
  readonly #clients = new Map<string, gmail_v1.Gmail>();

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
    this.#logger = ctx.logger.child({ connector: 'google_workspace.gmail' });
    this.#redact = secretRedactor(credentialSecrets(ctx.credentials));
  }

  #site(what: string): MapOptions {
    return { site: 'mailbox', what, redact: this.#redact };
  }

  /** A Gmail client acting as the mailbox user. */
  #clientFor(email: string): gmail_v1.Gmail {
    const key = email.toLowerCase();
    const cached = this.#clients.get(key);
    if (cached) return cached;
    const { config, credentials } = this.#ctx;
    const auth = serviceAccountClient(credentials, email, GMAIL_SCOPES, { tokenUrl: config.token_url, timeoutMs: config.request_timeout_ms });
    const client = gmail({ version: 'v1', auth, ...apiOptions(config) });
    if (this.#clients.size >= CLIENT_CACHE_SIZE) {
      const oldest = this.#clients.keys().next().value;
      if (oldest !== undefined) this.#clients.delete(oldest);
    }
    this.#clients.set(key, client);
    return client;
  }

  async install(target: MailboxTarget, signature: RenderedSignature, opts: InstallOptions = {}): Promise<InstallResult> {
    if (signature.kind !== 'primary') {
      throw new MailboxError('multi_signatures_not_supported', `Gmail keeps one signature per address; cannot install a ${signature.kind} variant`);
    }
    if (signature.html.length > GMAIL_MAX_SIGNATURE_LENGTH) {
      throw new MailboxError(
        'signature_too_long',
        `signature is ${signature.html.length} characters; Gmail accepts at most ${GMAIL_MAX_SIGNATURE_LENGTH}`,
      );
    }

    const api = this.#clientFor(target.email);
    // https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.settings.sendAs/list
    const listed = await call(this.#site('sendAs.list'), () => api.users.settings.sendAs.list({ userId: target.email }));
    const sendAs = parseProvider(GmailSendAsList, listed.data, 'gmail sendAs.list').sendAs ?? [];

    const wanted = new Set([target.email, ...target.aliases].map((e) => e.toLowerCase()));
    const toPatch: GmailSendAs[] = [];
    const skipped: { sendAsEmail: string; reason: 'not_verified' | 'not_a_directory_address' }[] = [];
    for (const s of sendAs) {
      const verified = s.isPrimary === true || s.verificationStatus === 'accepted';
      if (s.isPrimary === true || (verified && wanted.has(s.sendAsEmail.toLowerCase()))) toPatch.push(s);
      else skipped.push({ sendAsEmail: s.sendAsEmail, reason: verified ? 'not_a_directory_address' : 'not_verified' });
    }
    // Gmail always lists the primary address; a list without one is not a shape we know.
    if (!toPatch.some((s) => s.isPrimary === true)) throw new InvalidResponseError('gmail sendAs.list (no primary address)', []);
    toPatch.sort((a, b) => Number(b.isPrimary === true) - Number(a.isPrimary === true));

    const patched = [];
    // An address that already shows this exact signature (written by an earlier attempt of this
    // install) is not written again unless forced. Gmail sanitises what it stores, so after a
    // real write the listed signature may differ from ours, which only means writing once more.
    const alreadyShown = opts.force ? [] : toPatch.filter((s) => s.signature === signature.html).map((s) => s.sendAsEmail);
    for (const s of toPatch.filter((x) => !alreadyShown.includes(x.sendAsEmail))) {
      // https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.settings.sendAs/patch
      const res = await call(this.#site('sendAs.patch'), () =>
        api.users.settings.sendAs.patch({ userId: target.email, sendAsEmail: s.sendAsEmail, requestBody: { signature: signature.html } }),
      );
      patched.push(publicSendAs(parseProvider(GmailSendAs, res.data, 'gmail sendAs.patch')));
    }
    this.#logger.debug({ patched: patched.length, alreadyShown: alreadyShown.length, skipped: skipped.length }, 'gmail signature installed');
    return { providerResponse: { sendAs: patched, ...(alreadyShown.length ? { alreadyShown } : {}), skipped } };
  }
}

export const gmailInstaller = defineMailboxInstaller({
  kind: 'google_workspace',
  scopes: GMAIL_SCOPES,
  configSchema: googleConfigSchema,
  credentialsSchema: gmailCredentialsSchema,
  create: (ctx) => new GmailInstaller(ctx),
});
