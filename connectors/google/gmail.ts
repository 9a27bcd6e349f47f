/**
 * Gmail signature installer (category `signatures`).
 *
 * Acts as the mailbox user through domain-wide delegation (the service account's JWT subject is
 * the mailbox address) and patches `signature` on:
 * - the primary send-as address;
 * - the target address itself and each of `target.aliases`, when Gmail lists it as a send-as
 *   address that is verified (`verificationStatus: accepted`) or primary.
 * Other send-as addresses (pending verification, or unknown to the directory) are left alone
 * and reported in the provider response.
 *
 * One request per address written: a mailbox without directory aliases is patched directly (its
 * primary address), and one with aliases is listed (sendAs.list) only when what the last listing
 * said is unknown or stale (sendAsState.ts: the rule, and what is kept).
 *
 * Connecting checks the credentials without writing (checkAccess): with a `subject`, its send-as
 * addresses are listed as that mailbox, which proves the key, the delegation of the Gmail scope and
 * Gmail for that user; without one there is no mailbox to act as, and a token for the service
 * account itself proves the key only.
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
  type AccessCheck,
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
import { isFresh, readState, shownFor, stateFromListing, type GmailMailboxState } from './sendAsState.ts';

/** Reading and writing send-as settings (signatures). */
export const GMAIL_SCOPES = ['https://www.googleapis.com/auth/gmail.settings.basic'] as const;

/** Gmail's limit on a signature, HTML included. */
export const GMAIL_MAX_SIGNATURE_LENGTH = 10_000;

/**
 * A sendAs listing's share of the quota, counted in writes: Gmail charges 1 quota unit for
 * `settings.sendAs.list` and 100 for an update (developers.google.com/gmail/api/reference/quota).
 */
export const SENDAS_LIST_QUOTA_COST = 0.01;

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
    const auth = serviceAccountClient(credentials, email, GMAIL_SCOPES, {
      tokenUrl: config.token_url,
      timeoutMs: config.request_timeout_ms,
      signal: this.#ctx.signal,
    });
    const client = gmail({ version: 'v1', auth, ...apiOptions(config) });
    if (this.#clients.size >= CLIENT_CACHE_SIZE) {
      const oldest = this.#clients.keys().next().value;
      if (oldest !== undefined) this.#clients.delete(oldest);
    }
    this.#clients.set(key, client);
    return client;
  }

  async checkAccess(): Promise<AccessCheck> {
    const { config, credentials } = this.#ctx;
    const subject = credentials.subject;
    if (subject) {
      // https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.settings.sendAs/list
      const listed = await call(this.#site(`sendAs.list as ${subject}`), () => this.#clientFor(subject).users.settings.sendAs.list({ userId: subject }));
      parseProvider(GmailSendAsList, listed.data, 'gmail sendAs.list');
      return { unchecked: null };
    }
    const self = serviceAccountClient(credentials, undefined, GMAIL_SCOPES, {
      tokenUrl: config.token_url,
      timeoutMs: config.request_timeout_ms,
      signal: this.#ctx.signal,
    });
    await call(this.#site('token for the service account'), () => self.getAccessToken());
    return {
      unchecked:
        'the delegation of the Gmail scope: with no "subject" in the credentials there is no mailbox to act as, so only the key was checked (Google issued a token for the service account itself); add "subject" (any mailbox of the domain) to check it when connecting, or the first install proves it',
    };
  }

  async install(target: MailboxTarget, signature: RenderedSignature, opts: InstallOptions = {}): Promise<InstallResult> {
    if (signature.kind !== 'primary') {
      throw new MailboxError('multi_signatures_not_supported', `Gmail keeps one signature per address; cannot install a ${signature.kind} variant`);
    }
    if (signature.html.length > GMAIL_MAX_SIGNATURE_LENGTH) {
      throw new MailboxError('signature_too_long', `signature is ${signature.html.length} characters; Gmail accepts at most ${GMAIL_MAX_SIGNATURE_LENGTH}`);
    }
    const api = this.#clientFor(target.email);
    if (target.aliases.length === 0) {
      // Only the primary address is written: patch it without listing.
      const written = await this.#patch(api, target.email, target.email, signature.html);
      if (written.isPrimary === true) return this.#done({ sendAs: [publicSendAs(written)], skipped: [] });
      // The directory's address is not the mailbox's primary send-as: list, and write that one too.
      return this.#installListed(api, target, signature, opts, [written.sendAsEmail]);
    }
    const known = readState(opts.state);
    if (isFresh(known, target.aliases)) return this.#installKnown(api, target, signature, opts, known);
    return this.#installListed(api, target, signature, opts, []);
  }

  /** The quota `install` will take: one write per address written, and the listing when it is needed. */
  quotaCostFor(target: MailboxTarget, opts: InstallOptions = {}): number {
    if (target.aliases.length === 0) return 1;
    const known = readState(opts.state);
    return isFresh(known, target.aliases) ? 1 + known.verified.length : 1 + target.aliases.length + SENDAS_LIST_QUOTA_COST;
  }

  /** Writes from what the last listing said: the primary address and the verified directory aliases. */
  async #installKnown(
    api: gmail_v1.Gmail,
    target: MailboxTarget,
    signature: RenderedSignature,
    opts: InstallOptions,
    known: GmailMailboxState,
  ): Promise<InstallResult> {
    const shown = shownFor(known, signature.hash, opts.force === true);
    const toPatch = [known.primary, ...known.verified];
    const skipped = known.pending.map((sendAsEmail) => ({ sendAsEmail, reason: 'not_verified' as const }));
    const { shown: _previous, ...base } = known;
    const patched = await this.#writeAll(
      api,
      target,
      toPatch.filter((a) => !shown.has(a.toLowerCase())),
      signature,
      { base, shown: [...shown], onState: opts.onState },
    );
    // The addresses of the unfinished install are shown now: nothing left to remember.
    if (known.shown) opts.onState?.(base);
    const alreadyShown = toPatch.filter((a) => shown.has(a.toLowerCase()));
    return this.#done({ sendAs: patched, ...(alreadyShown.length ? { alreadyShown } : {}), skipped, listedAt: known.listedAt });
  }

  /** Lists the send-as addresses, keeps what the listing says, then writes. */
  async #installListed(
    api: gmail_v1.Gmail,
    target: MailboxTarget,
    signature: RenderedSignature,
    opts: InstallOptions,
    written: string[],
  ): Promise<InstallResult> {
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
    const base = target.aliases.length ? stateFromListing(sendAs, target.aliases) : undefined;
    if (base) opts.onState?.(base);

    // An address that already shows this exact signature (written by an earlier attempt of this
    // install) is not written again unless forced. Gmail sanitises what it stores, so after a
    // real write the listed signature may differ from ours, which only means writing once more.
    const done = new Set(written.map((a) => a.toLowerCase()));
    const alreadyShown = opts.force
      ? []
      : toPatch.filter((s) => s.signature === signature.html && !done.has(s.sendAsEmail.toLowerCase())).map((s) => s.sendAsEmail);
    const todo = toPatch.filter((x) => !alreadyShown.includes(x.sendAsEmail) && !done.has(x.sendAsEmail.toLowerCase())).map((x) => x.sendAsEmail);
    const patched = await this.#writeAll(api, target, todo, signature, { base, shown: [...done, ...alreadyShown], onState: opts.onState });
    return this.#done({ sendAs: patched, ...(alreadyShown.length ? { alreadyShown } : {}), skipped });
  }

  /**
   * Patches each address in turn. When a call fails after some were written, the state says which
   * already show this signature, so that the retry does not write them again.
   */
  async #writeAll(
    api: gmail_v1.Gmail,
    target: MailboxTarget,
    addresses: string[],
    signature: RenderedSignature,
    state: { base: GmailMailboxState | undefined; shown: string[]; onState: InstallOptions['onState'] },
  ): Promise<ReturnType<typeof publicSendAs>[]> {
    const patched: ReturnType<typeof publicSendAs>[] = [];
    try {
      for (const address of addresses) patched.push(publicSendAs(await this.#patch(api, target.email, address, signature.html)));
    } catch (err) {
      if (state.base && patched.length) {
        state.onState?.({ ...state.base, shown: { hash: signature.hash, addresses: [...state.shown, ...patched.map((p) => p.sendAsEmail)] } });
      }
      throw err;
    }
    return patched;
  }

  async #patch(api: gmail_v1.Gmail, userId: string, sendAsEmail: string, html: string): Promise<GmailSendAs> {
    // https://developers.google.com/workspace/gmail/api/reference/rest/v1/users.settings.sendAs/patch
    const res = await call(this.#site('sendAs.patch'), () => api.users.settings.sendAs.patch({ userId, sendAsEmail, requestBody: { signature: html } }));
    return parseProvider(GmailSendAs, res.data, 'gmail sendAs.patch');
  }

  #done(providerResponse: { sendAs: unknown[]; alreadyShown?: string[]; skipped: unknown[]; listedAt?: string }): InstallResult {
    this.#logger.debug(
      { patched: providerResponse.sendAs.length, alreadyShown: providerResponse.alreadyShown?.length ?? 0, skipped: providerResponse.skipped.length },
      'gmail signature installed',
    );
    return { providerResponse };
  }
}

export const gmailInstaller = defineMailboxInstaller({
  kind: 'google_workspace',
  scopes: GMAIL_SCOPES,
  configSchema: googleConfigSchema,
  maxHtmlLength: () => GMAIL_MAX_SIGNATURE_LENGTH,
  credentialsSchema: gmailCredentialsSchema,
  create: (ctx) => new GmailInstaller(ctx),
});
