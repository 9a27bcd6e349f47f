import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { useNock } from '../helpers.ts';
import { GMAIL_MAX_SIGNATURE_LENGTH, GMAIL_SCOPES, gmailInstaller } from '../../../connectors/google/gmail.ts';
import { AccessLostError, ConnectorError, MailboxError, RateLimitedError, type MailboxTarget, type RenderedSignature } from '../../../connectors/types.ts';
import {
  CLIENT_EMAIL,
  GMAIL_ORIGIN,
  TOKEN_RESPONSE,
  apiError,
  countUnmatched,
  fixture,
  mockTokenError,
  mockTokenExchange,
  serviceAccountKey,
  silentLogger,
} from './helpers.ts';

const MAILBOX = 'alice.martin@acme.example';
const LIST_PATH = `/gmail/v1/users/${encodeURIComponent(MAILBOX)}/settings/sendAs`;
const patchPath = (sendAs: string) => `${LIST_PATH}/${encodeURIComponent(sendAs)}`;

const target: MailboxTarget = { email: MAILBOX, aliases: ['alice@acme.example', 'sales-lead@acme.example'], displayName: 'Alice Martin' };

function signature(html = '<table><tr><td><b>Alice Martin</b><br>Regional Sales Director</td></tr></table>'): RenderedSignature {
  return { html, text: 'Alice Martin\nRegional Sales Director', hash: 'sha256:0f3c', kind: 'primary' };
}

function installer(config: Record<string, unknown> = {}) {
  const def = gmailInstaller;
  return def.create({ config: def.configSchema.parse(config), credentials: def.credentialsSchema.parse(serviceAccountKey()), logger: silentLogger() });
}

async function installError(t: MailboxTarget = target, s: RenderedSignature = signature()): Promise<ConnectorError> {
  const err: unknown = await installer()
    .install(t, s)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  if (!(err instanceof ConnectorError)) throw new Error(`expected a ConnectorError, got ${String(err)}`);
  return err;
}

type SendAs = { sendAsEmail: string; [k: string]: unknown };
const sendAsList = fixture<{ sendAs: SendAs[] }>('sendAs.list.json');

useNock();

describe('Gmail installer', () => {
  it('holds one signature per address, up to 10,000 characters', () => {
    const i = installer();
    expect(i.slots).toEqual(['primary']);
    expect(i.maxHtmlLength).toBe(10_000);
  });

  it('acts as the mailbox user and patches the primary address and verified aliases only', async () => {
    let claims: Record<string, unknown> = {};
    const token = mockTokenExchange((c) => (claims = c));
    const patched: { sendAs: string; body: unknown }[] = [];
    const api = nock(GMAIL_ORIGIN).matchHeader('authorization', `Bearer ${TOKEN_RESPONSE.access_token}`).get(LIST_PATH).reply(200, sendAsList);
    for (const email of [MAILBOX, 'alice@acme.example']) {
      // nock hands a reply function the fetch Request.
      api.patch(patchPath(email)).reply(200, async (req: Request) => {
        const body = (await req.json()) as { signature: string };
        patched.push({ sendAs: email, body });
        const entry = sendAsList.sendAs.find((s) => s.sendAsEmail === email)!;
        return { ...entry, signature: body.signature };
      });
    }

    const html = signature().html;
    const result = await installer().install(target, signature(html));
    token.done();
    api.done();

    expect(claims).toMatchObject({ iss: CLIENT_EMAIL, sub: MAILBOX, scope: GMAIL_SCOPES.join(' ') });
    expect(patched).toEqual([
      { sendAs: MAILBOX, body: { signature: html } },
      { sendAs: 'alice@acme.example', body: { signature: html } },
    ]);
    expect(result.providerResponse).toEqual({
      sendAs: [
        { sendAsEmail: MAILBOX, displayName: 'Alice Martin', isPrimary: true, isDefault: true, verificationStatus: null, signature: html },
        { sendAsEmail: 'alice@acme.example', displayName: 'Alice Martin', isPrimary: false, isDefault: false, verificationStatus: 'accepted', signature: html },
      ],
      skipped: [
        { sendAsEmail: 'sales-lead@acme.example', reason: 'not_verified' },
        { sendAsEmail: 'alice.perso@mail.example', reason: 'not_a_directory_address' },
      ],
    });
    expect(JSON.stringify(result.providerResponse)).not.toContain('smtp.mail.example');
  });

  it('does not write again an address that already shows the signature (a retry after a 429 on the alias), unless forced', async () => {
    const html = signature().html;
    // The first attempt wrote the primary address, then the alias answered 429.
    const listed = { sendAs: sendAsList.sendAs.map((s) => (s.sendAsEmail === MAILBOX ? { ...s, signature: html } : s)) };
    mockTokenExchange();
    const retry = nock(GMAIL_ORIGIN)
      .get(LIST_PATH)
      .reply(200, listed)
      .patch(patchPath('alice@acme.example'))
      .reply(200, { ...sendAsList.sendAs[1], signature: html });
    const result = await installer().install(target, signature(html));
    retry.done();
    expect(result.providerResponse).toMatchObject({ sendAs: [{ sendAsEmail: 'alice@acme.example' }], alreadyShown: [MAILBOX] });

    mockTokenExchange();
    const forced = nock(GMAIL_ORIGIN)
      .get(LIST_PATH)
      .reply(200, listed)
      .patch(patchPath(MAILBOX))
      .reply(200, listed.sendAs[0])
      .patch(patchPath('alice@acme.example'))
      .reply(200, { ...sendAsList.sendAs[1], signature: html });
    await installer().install(target, signature(html), { force: true });
    forced.done();
  });

  describe('writing without listing first', () => {
    const html = signature().html;
    const echo = (email: string) => async (req: Request) => ({
      ...sendAsList.sendAs.find((s) => s.sendAsEmail === email)!,
      signature: ((await req.json()) as { signature: string }).signature,
    });

    it('patches the primary address of a mailbox without directory aliases, with no sendAs.list', async () => {
      mockTokenExchange();
      const api = nock(GMAIL_ORIGIN).patch(patchPath(MAILBOX)).reply(200, echo(MAILBOX));
      const listed = nock(GMAIL_ORIGIN).get(LIST_PATH).reply(200, sendAsList);
      const i = installer();
      expect(i.quotaCostFor!({ email: MAILBOX, aliases: [] })).toBe(1);
      const result = await i.install({ email: MAILBOX, aliases: [] }, signature(html));
      api.done();
      expect(listed.isDone()).toBe(false);
      expect(result.providerResponse).toMatchObject({ sendAs: [{ sendAsEmail: MAILBOX, isPrimary: true, signature: html }], skipped: [] });
    });

    it('lists a mailbox with aliases once, keeps the verified ones, and writes them the next time without listing', async () => {
      mockTokenExchange();
      const first = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(200, sendAsList)
        .patch(patchPath(MAILBOX))
        .reply(200, echo(MAILBOX))
        .patch(patchPath('alice@acme.example'))
        .reply(200, echo('alice@acme.example'));
      const states: unknown[] = [];
      const i = installer();
      // The listing takes 0.01 of the quota (1 unit against an update's 100), each address written 1.
      expect(i.quotaCostFor!(target, {})).toBeCloseTo(1.01 + target.aliases.length, 9);
      await i.install(target, signature(html), { onState: (st) => states.push(st) });
      first.done();
      expect(states).toHaveLength(1);
      const state = states[0];
      expect(state).toMatchObject({
        aliases: ['alice@acme.example', 'sales-lead@acme.example'],
        primary: MAILBOX,
        verified: ['alice@acme.example'],
        pending: ['sales-lead@acme.example'],
      });

      // The next install: the primary address and the verified alias, no listing, the pending alias still skipped.
      const next = nock(GMAIL_ORIGIN)
        .patch(patchPath(MAILBOX))
        .reply(200, echo(MAILBOX))
        .patch(patchPath('alice@acme.example'))
        .reply(200, echo('alice@acme.example'));
      const listed = nock(GMAIL_ORIGIN).get(LIST_PATH).reply(200, sendAsList);
      expect(i.quotaCostFor!(target, { state })).toBe(2);
      const result = await i.install(target, signature('<p>new</p>'), { state, onState: (st) => states.push(st) });
      next.done();
      expect(listed.isDone()).toBe(false);
      expect(states).toHaveLength(1);
      expect(result.providerResponse).toMatchObject({
        sendAs: [{ sendAsEmail: MAILBOX }, { sendAsEmail: 'alice@acme.example' }],
        skipped: [{ sendAsEmail: 'sales-lead@acme.example', reason: 'not_verified' }],
      });
    });

    it('lists again when the directory aliases changed, or the listing is stale', async () => {
      const state = {
        v: 1,
        listedAt: new Date().toISOString(),
        aliases: ['alice@acme.example'],
        primary: MAILBOX,
        verified: ['alice@acme.example'],
        pending: [],
      };
      const i = installer();
      expect(i.quotaCostFor!({ ...target, aliases: ['alice@acme.example'] }, { state })).toBe(2);
      expect(i.quotaCostFor!(target, { state })).toBeCloseTo(1.01 + target.aliases.length, 9);
      const old = { ...state, listedAt: new Date(Date.now() - 8 * 24 * 3600_000).toISOString() };
      expect(i.quotaCostFor!({ ...target, aliases: ['alice@acme.example'] }, { state: old })).toBeCloseTo(2.01, 9);
      mockTokenExchange();
      const relisted = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(200, sendAsList)
        .patch(patchPath(MAILBOX))
        .reply(200, echo(MAILBOX))
        .patch(patchPath('alice@acme.example'))
        .reply(200, echo('alice@acme.example'));
      await i.install({ ...target, aliases: ['alice@acme.example'] }, signature(html), { state: old });
      relisted.done();
    });

    it('after a 429 on the alias, the retry writes only the alias (no listing), unless forced', async () => {
      const state = {
        v: 1,
        listedAt: new Date().toISOString(),
        aliases: ['alice@acme.example', 'sales-lead@acme.example'],
        primary: MAILBOX,
        verified: ['alice@acme.example'],
        pending: ['sales-lead@acme.example'],
      };
      mockTokenExchange();
      const first = nock(GMAIL_ORIGIN)
        .patch(patchPath(MAILBOX))
        .reply(200, echo(MAILBOX))
        .patch(patchPath('alice@acme.example'))
        .reply(429, apiError(429, 'Rate Limit Exceeded', 'rateLimitExceeded', 'RESOURCE_EXHAUSTED'), { 'Retry-After': '1' });
      const states: unknown[] = [];
      const i = installer();
      const err = await i.install(target, signature(html), { state, onState: (st) => states.push(st) }).catch((e: unknown) => e);
      first.done();
      expect(err).toBeInstanceOf(RateLimitedError);
      expect(states).toEqual([{ ...state, shown: { hash: signature().hash, addresses: [MAILBOX] } }]);

      const retry = nock(GMAIL_ORIGIN).patch(patchPath('alice@acme.example')).reply(200, echo('alice@acme.example'));
      const result = await i.install(target, signature(html), { state: states[0], onState: (st) => states.push(st) });
      retry.done();
      expect(result.providerResponse).toMatchObject({ sendAs: [{ sendAsEmail: 'alice@acme.example' }], alreadyShown: [MAILBOX] });
      expect(states[1]).toEqual(state); // done: nothing left to remember

      const forced = nock(GMAIL_ORIGIN)
        .patch(patchPath(MAILBOX))
        .reply(200, echo(MAILBOX))
        .patch(patchPath('alice@acme.example'))
        .reply(200, echo('alice@acme.example'));
      await i.install(target, signature(html), { state: states[0], force: true });
      forced.done();
    });
  });

  it('honours base_url and token_url overrides', async () => {
    const token = mockTokenExchange(undefined, 'https://sandbox.sigsync.test', '/oauth2/token');
    const api = nock('https://sandbox.sigsync.test').patch(patchPath(MAILBOX)).reply(200, sendAsList.sendAs[0]);
    const i = gmailInstaller.create({
      config: gmailInstaller.configSchema.parse({ base_url: 'https://sandbox.sigsync.test', token_url: 'https://sandbox.sigsync.test/oauth2/token' }),
      credentials: gmailInstaller.credentialsSchema.parse(serviceAccountKey()),
      logger: silentLogger(),
    });
    await i.install({ email: MAILBOX, aliases: [] }, signature());
    token.done();
    api.done();
  });

  it('rejects a signature over 10,000 characters before any call', async () => {
    const unmatched = countUnmatched();
    try {
      const err = await installError(target, signature(`<p>${'x'.repeat(GMAIL_MAX_SIGNATURE_LENGTH)}</p>`));
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'signature_too_long', status: undefined });
      expect(unmatched.count).toBe(0); // not even a token request
      // the counter does see requests: one made now is counted
      await fetch(`${GMAIL_ORIGIN}/gmail/v1/users/me/settings/sendAs`).catch(() => undefined);
      expect(unmatched.count).toBe(1);
    } finally {
      unmatched.stop();
    }
  });

  it('accepts a signature of exactly 10,000 characters', async () => {
    const token = mockTokenExchange();
    const api = nock(GMAIL_ORIGIN).patch(patchPath(MAILBOX)).reply(200, sendAsList.sendAs[0]);
    await installer().install({ email: MAILBOX, aliases: [] }, signature('y'.repeat(GMAIL_MAX_SIGNATURE_LENGTH)));
    token.done();
    api.done();
  });

  it('refuses reply and internal variants without a call: Gmail has no slot for them', async () => {
    const unmatched = countUnmatched();
    try {
      const err = await installError(target, { ...signature(), kind: 'reply' });
      expect(err).toBeInstanceOf(MailboxError);
      expect(err.code).toBe('multi_signatures_not_supported');
      expect(unmatched.count).toBe(0);
    } finally {
      unmatched.stop();
    }
  });

  describe('error mapping', () => {
    it('404 from sendAs.list is user_not_found', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(404, apiError(404, 'Requested entity was not found.', 'notFound', 'NOT_FOUND'));
      const err = await installError();
      token.done();
      api.done();
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'user_not_found', status: 404, providerCode: 'notFound' });
    });

    it('invalid_grant for an unknown mailbox user is user_not_found', async () => {
      const token = mockTokenError('invalid_grant', 'Invalid email or User ID');
      const err = await installError();
      token.done();
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'user_not_found', status: 400, providerCode: 'invalid_grant' });
      expect(err.message).toContain('Invalid email or User ID');
    });

    it('invalid_grant for a deleted key is access_lost, not a mailbox failure', async () => {
      const token = mockTokenError('invalid_grant', 'Invalid JWT Signature.');
      const err = await installError();
      token.done();
      expect(err).toBeInstanceOf(AccessLostError);
      expect(err).toMatchObject({ code: 'access_lost', providerCode: 'invalid_grant' });
    });

    it('unauthorized_client is the mailbox error unauthorized_client', async () => {
      const token = mockTokenError(
        'unauthorized_client',
        'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
        401,
      );
      const err = await installError();
      token.done();
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'unauthorized_client', status: 401, providerCode: 'unauthorized_client' });
    });

    it('403 is forbidden', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(403, apiError(403, 'Delegation denied for alice.martin@acme.example', 'forbidden', 'PERMISSION_DENIED'));
      const err = await installError();
      token.done();
      api.done();
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'forbidden', status: 403, providerCode: 'forbidden' });
    });

    it('"Mail service not enabled" (400 failedPrecondition) is forbidden', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(400, apiError(400, 'Mail service not enabled', 'failedPrecondition', 'FAILED_PRECONDITION'));
      const err = await installError();
      token.done();
      api.done();
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'forbidden', status: 400, providerCode: 'failedPrecondition' });
      expect(err.message).toContain('Mail service not enabled');
    });

    it('429 is rate_limited with Retry-After', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(429, apiError(429, 'Too many concurrent requests for user', 'rateLimitExceeded', 'RESOURCE_EXHAUSTED'), { 'Retry-After': '30' });
      const err = await installError();
      token.done();
      api.done();
      expect(err).toBeInstanceOf(RateLimitedError);
      expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfterMs: 30_000 });
    });

    it('403 userRateLimitExceeded on the patch is rate_limited', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(200, sendAsList)
        .patch(patchPath(MAILBOX))
        .reply(403, apiError(403, 'User-rate limit exceeded.', 'userRateLimitExceeded', 'PERMISSION_DENIED', 'usageLimits'));
      const err = await installError();
      token.done();
      api.done();
      expect(err).toBeInstanceOf(RateLimitedError);
      expect(err).toMatchObject({ code: 'rate_limited', status: 403, providerCode: 'userRateLimitExceeded' });
      expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan(0);
    });

    it('401 and a disabled Gmail API concern the whole integration: access_lost', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(401, apiError(401, 'Request had invalid authentication credentials.', 'authError', 'UNAUTHENTICATED'))
        .get(LIST_PATH)
        .reply(
          403,
          apiError(403, 'Gmail API has not been used in project 4711 before or it is disabled.', 'accessNotConfigured', 'PERMISSION_DENIED', 'usageLimits'),
        );
      const i = installer();
      const unauthenticated = await i.install(target, signature()).catch((e: unknown) => e);
      const disabled = await i.install(target, signature()).catch((e: unknown) => e);
      token.done();
      api.done();
      expect(unauthenticated).toBeInstanceOf(AccessLostError);
      expect(unauthenticated).toMatchObject({ code: 'access_lost', status: 401 });
      expect(disabled).toBeInstanceOf(AccessLostError);
      expect(disabled).toMatchObject({ code: 'access_lost', status: 403, providerCode: 'accessNotConfigured' });
    });

    it('Gmail’s own length refusal is signature_too_long', async () => {
      const token = mockTokenExchange();
      const api = nock(GMAIL_ORIGIN)
        .get(LIST_PATH)
        .reply(200, sendAsList)
        .patch(patchPath(MAILBOX))
        .reply(400, apiError(400, 'Signature exceeds maximum length of 10000 characters', 'invalidArgument', 'INVALID_ARGUMENT'));
      const err = await installError();
      token.done();
      api.done();
      expect(err).toBeInstanceOf(MailboxError);
      expect(err.code).toBe('signature_too_long');
    });
  });

  describe('checking the credentials when connecting, without writing', () => {
    const ADMIN = 'it-admin@acme.example';
    const checker = (credentials: Record<string, unknown>) =>
      gmailInstaller.create({
        config: gmailInstaller.configSchema.parse({}),
        credentials: gmailInstaller.credentialsSchema.parse(credentials),
        logger: silentLogger(),
      });

    it('with a subject: lists that mailbox’s send-as addresses as it, and proves everything', async () => {
      let claims: Record<string, unknown> = {};
      const token = mockTokenExchange((c) => (claims = c));
      const api = nock(GMAIL_ORIGIN)
        .get(`/gmail/v1/users/${encodeURIComponent(ADMIN)}/settings/sendAs`)
        .reply(200, sendAsList);
      await expect(checker(serviceAccountKey({ subject: ADMIN })).checkAccess!()).resolves.toEqual({ unchecked: null });
      token.done();
      api.done();
      expect(claims).toMatchObject({ iss: CLIENT_EMAIL, sub: ADMIN, scope: GMAIL_SCOPES.join(' ') });
    });

    it('without a subject: a token for the service account itself proves the key; the delegation is said not to be checked', async () => {
      let claims: Record<string, unknown> = {};
      const token = mockTokenExchange((c) => (claims = c));
      const unmatched = countUnmatched();
      const { subject: _, ...key } = serviceAccountKey();
      const check = await checker(key).checkAccess!();
      unmatched.stop();
      token.done();
      expect(claims.sub).toBeUndefined();
      expect(claims.iss).toBe(CLIENT_EMAIL);
      expect(check.unchecked).toMatch(/^the delegation of the Gmail scope: with no "subject"/);
      expect(unmatched.count).toBe(0);
    });

    it('a key Google does not accept is access_lost, with Google’s words and no secret', async () => {
      mockTokenError('invalid_grant', 'Invalid JWT Signature.');
      const err = await checker(serviceAccountKey({ subject: ADMIN })).checkAccess!().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AccessLostError);
      expect((err as Error).message).toBe(`sendAs.list as ${ADMIN}: invalid_grant: Invalid JWT Signature.`);
    });

    it('a subject without a mailbox is user_not_found', async () => {
      mockTokenExchange();
      nock(GMAIL_ORIGIN)
        .get(`/gmail/v1/users/${encodeURIComponent(ADMIN)}/settings/sendAs`)
        .reply(404, apiError(404, 'Requested entity was not found.', 'notFound', 'NOT_FOUND'));
      const err = await checker(serviceAccountKey({ subject: ADMIN })).checkAccess!().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MailboxError);
      expect(err).toMatchObject({ code: 'user_not_found' });
    });
  });
});
