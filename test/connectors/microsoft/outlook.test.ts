import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { DEFAULT_OUTLOOK_MAX_HTML, outlookInstaller } from '../../../connectors/microsoft/outlook.ts';
import { AccessLostError, MailboxError, type MailboxInstaller, RateLimitedError, type RenderedSignature, TransientError } from '../../../connectors/types.ts';
import { aadstsError, ACCESS_TOKEN, config, CREDENTIALS, fixture, GRAPH, graphErrorBody, tokenScope, uid } from './helpers.ts';

const ITEM = `/beta/users/${uid(1)}/mailFolders/root/userConfigurations/OWA.UserOptions`;
const expected = fixture<{ signature: RenderedSignature; patchBody: unknown }>('userConfiguration.owa.expected.json');
const signature = expected.signature;
const target = { email: 'adele.vance@contoso.com', aliases: ['AdeleV@contoso.com'], externalId: uid(1) };

function installer(extra: Record<string, unknown> = {}): MailboxInstaller {
  return outlookInstaller.create({ config: config(extra), credentials: CREDENTIALS, logger: captureLogger().logger });
}

useNock();

describe('Outlook installer', () => {
  it('has one slot (OWA keeps one signature) and an 8,000-character limit unless configured', () => {
    const i = installer();
    expect(i.slots).toEqual(['primary']);
    expect(i.maxHtmlLength).toBe(DEFAULT_OUTLOOK_MAX_HTML);
    expect(installer({ max_html_length: 20_000 }).maxHtmlLength).toBe(20_000);
  });

  it('reads OWA.UserOptions on the root folder and writes it back with the signature keys replaced and every other entry kept', async () => {
    tokenScope();
    let patched: unknown;
    const graph = nock(GRAPH)
      .matchHeader('authorization', `Bearer ${ACCESS_TOKEN}`)
      .get(ITEM)
      .reply(200, fixture('userConfiguration.owa.json'))
      .patch(ITEM, (body: unknown) => ((patched = body), true))
      .reply(200, { id: 'OWA.UserOptions', structuredData: [{ '@odata.type': 'microsoft.graph.structuredDataEntry' }] });
    const result = await installer().install(target, signature);
    expect(patched).toEqual(expected.patchBody);
    expect(result.providerResponse).toEqual({
      action: 'updated',
      status: 200,
      item: 'OWA.UserOptions',
      folder: 'root',
      keys: ['signaturehtml', 'signaturetext', 'autoaddsignature', 'autoaddsignatureonreply'],
      keptEntries: 3,
    });
    graph.done();
  });

  it('creates OWA.UserOptions when the mailbox has none yet', async () => {
    tokenScope();
    let posted: { id?: string; structuredData?: { keyEntry: { values: string[] }; valueEntry: { values: string[] } }[] } = {};
    const graph = nock(GRAPH)
      .get(ITEM)
      .reply(404, graphErrorBody('ErrorItemNotFound', 'The specified object was not found in the store.'))
      .post(`/beta/users/${uid(1)}/mailFolders/root/userConfigurations`, (body: typeof posted) => ((posted = body), true))
      .reply(201, { id: 'OWA.UserOptions' });
    const result = await installer().install(target, signature);
    expect(posted.id).toBe('OWA.UserOptions');
    expect(posted.structuredData!.map((e) => [e.keyEntry.values[0], e.valueEntry.values[0]])).toEqual([
      ['signaturehtml', signature.html],
      ['signaturetext', signature.text],
      ['autoaddsignature', 'true'],
      ['autoaddsignatureonreply', 'true'],
    ]);
    expect(result.providerResponse).toMatchObject({ action: 'created', status: 201 });
    graph.done();
  });

  it('addresses the mailbox by email when the directory id is unknown, and uses the configured beta root', async () => {
    tokenScope();
    const graph = nock('https://graph.microsoft.us')
      .get('/beta/users/adele.vance%40contoso.com/mailFolders/root/userConfigurations/OWA.UserOptions')
      .reply(200, { id: 'OWA.UserOptions', structuredData: [] })
      .patch('/beta/users/adele.vance%40contoso.com/mailFolders/root/userConfigurations/OWA.UserOptions')
      .reply(200, {});
    await installer({ base_url: 'https://graph.microsoft.us/v1.0' }).install({ email: 'adele.vance@contoso.com', aliases: [] }, signature);
    graph.done();
  });

  it('refuses a reply signature and a too-long signature without calling Graph', async () => {
    const i = installer();
    const reply = await i.install(target, { ...signature, kind: 'reply' }).catch((e: unknown) => e);
    expect(reply).toBeInstanceOf(MailboxError);
    expect(reply).toMatchObject({ code: 'multi_signatures_not_supported' });
    const long = await i.install(target, { ...signature, html: 'x'.repeat(DEFAULT_OUTLOOK_MAX_HTML + 1) }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(MailboxError);
    expect(long).toMatchObject({ code: 'signature_too_long' });
    expect((long as Error).message).toContain('8000');
    expect(nock.pendingMocks()).toEqual([]);
  });

  it.each([
    ['404 Request_ResourceNotFound', 404, 'Request_ResourceNotFound', MailboxError, 'user_not_found'],
    ['404 ErrorInvalidUser', 404, 'ErrorInvalidUser', MailboxError, 'user_not_found'],
    ['404 MailboxNotEnabledForRESTAPI', 404, 'MailboxNotEnabledForRESTAPI', MailboxError, 'user_not_found'],
    ['403 ErrorAccessDenied (mailbox outside the app access policy)', 403, 'ErrorAccessDenied', MailboxError, 'forbidden'],
    ['403 Authorization_RequestDenied', 403, 'Authorization_RequestDenied', AccessLostError, 'access_lost'],
    ['401 InvalidAuthenticationToken', 401, 'InvalidAuthenticationToken', AccessLostError, 'access_lost'],
    ['500 generalException', 500, 'generalException', TransientError, 'transient'],
  ] as const)('maps %s on the read to %s', async (_name, status, providerCode, cls, code) => {
    tokenScope();
    const graph = nock(GRAPH)
      .get(ITEM)
      .reply(status, graphErrorBody(providerCode, `Graph says ${providerCode}`));
    const err = await installer()
      .install(target, signature)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(cls);
    expect(err).toMatchObject({ code, status, providerCode });
    expect((err as Error).message).toContain(`Graph says ${providerCode}`);
    graph.done();
  });

  it('maps a 429 on the write to RateLimitedError with the Retry-After delay', async () => {
    tokenScope();
    const graph = nock(GRAPH)
      .get(ITEM)
      .reply(200, { structuredData: [] })
      .patch(ITEM)
      .reply(429, graphErrorBody('ApplicationThrottled', 'Application is over its MailboxConcurrency limit.'), { 'Retry-After': '30' });
    const err = await installer()
      .install(target, signature)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'rate_limited', retryAfterMs: 30_000, status: 429, providerCode: 'ApplicationThrottled' });
    graph.done();
  });

  it('maps a token endpoint refusal to AccessLostError before calling Graph', async () => {
    const token = tokenScope(undefined, [401, aadstsError('invalid_client', 7000222, "The provided client secret keys for app '6731de76' are expired.")]);
    const err = await installer()
      .install(target, signature)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ code: 'access_lost', providerCode: 'AADSTS7000222' });
    token.done();
  });
});
