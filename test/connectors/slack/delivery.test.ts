import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { previewText, SLACK_MAX_HTML, slackDelivery } from '../../../connectors/slack/delivery.ts';
import { AccessLostError, MailboxError, type MailboxInstaller, RateLimitedError, type RenderedSignature, TransientError } from '../../../connectors/types.ts';
import { config, CREDENTIALS, field, fixture, slack, slackError } from './helpers.ts';

const signature: RenderedSignature = {
  html: '<table><tr><td style="color:#333">Alice Émilie Dupont &middot; Head of Design 🎨</td></tr></table>',
  text: 'Alice Émilie Dupont · Head of Design 🎨\n+33 1 23 45 67 89 <alice@acme.test>',
  hash: 'sha256:9c1185a5c5e9fc54612808977ee8f548b2258d31',
  kind: 'primary',
};
const target = { email: 'alice@acme.test', aliases: ['a.dupont@acme.test'] };

function delivery(): MailboxInstaller {
  return slackDelivery.create({ config: config(), credentials: CREDENTIALS, logger: captureLogger().logger });
}

interface PostedMessage {
  channel: string;
  text: string;
  blocks: string;
  unfurl_links: string;
}

useNock();

describe('Slack delivery', () => {
  it('has one slot and a 10,000-character limit', () => {
    const d = delivery();
    expect(d.slots).toEqual(['primary']);
    expect(d.maxHtmlLength).toBe(SLACK_MAX_HTML);
    expect(SLACK_MAX_HTML).toBe(10_000);
  });

  it('looks the teammate up by email, opens a DM and posts the preview with the HTML to paste', async () => {
    let posted: PostedMessage | undefined;
    const scope = slack()
      .post('/api/users.lookupByEmail', field('email', 'alice@acme.test'))
      .reply(200, fixture('users.lookupByEmail.json'))
      .post('/api/conversations.open', field('users', 'U01ALICE'))
      .reply(200, fixture('conversations.open.json'))
      .post('/api/chat.postMessage', (b: PostedMessage) => ((posted = b), true))
      .reply(200, fixture('chat.postMessage.json'));
    const result = await delivery().install(target, signature);
    expect(result.providerResponse).toEqual({ user: 'U01ALICE', channel: 'D01ALICEDM', ts: '1732190000.000100' });

    expect(posted!.channel).toBe('D01ALICEDM');
    expect(posted!.unfurl_links).toBe('false');
    expect(posted!.text).toContain('signature was updated');
    const blocks = JSON.parse(posted!.blocks) as { type: string; text?: { text: string }; elements?: { elements?: { text: string }[] }[] }[];
    expect(blocks.map((b) => b.type)).toEqual(['section', 'section', 'rich_text', 'context']);
    // The preview is a quote with mrkdwn's special characters escaped...
    expect(blocks[1]!.text!.text).toBe('>Alice Émilie Dupont · Head of Design 🎨\n>+33 1 23 45 67 89 &lt;alice@acme.test&gt;');
    // ...and the HTML is carried verbatim, ready to copy.
    expect(blocks[2]!.elements![0]!.elements![0]!.text).toBe(signature.html);
    scope.done();
  });

  it('tries the aliases when the primary address is not a Slack member', async () => {
    const scope = slack()
      .post('/api/users.lookupByEmail', field('email', 'alice@acme.test'))
      .reply(200, slackError('users_not_found'))
      .post('/api/users.lookupByEmail', field('email', 'a.dupont@acme.test'))
      .reply(200, fixture('users.lookupByEmail.json'))
      .post('/api/conversations.open')
      .reply(200, fixture('conversations.open.json'))
      .post('/api/chat.postMessage')
      .reply(200, fixture('chat.postMessage.json'));
    await expect(delivery().install(target, signature)).resolves.toMatchObject({ providerResponse: { user: 'U01ALICE' } });
    scope.done();
  });

  it('maps users_not_found (for every address) to MailboxError(user_not_found)', async () => {
    const scope = slack().post('/api/users.lookupByEmail').times(2).reply(200, slackError('users_not_found'));
    const err = await delivery()
      .install(target, signature)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailboxError);
    expect(err).toMatchObject({ code: 'user_not_found', providerCode: 'users_not_found' });
    scope.done();
  });

  it('treats a deactivated member as user_not_found', async () => {
    const user = fixture<{ user: Record<string, unknown> }>('users.lookupByEmail.json');
    const scope = slack()
      .post('/api/users.lookupByEmail')
      .times(2)
      .reply(200, { ...user, user: { ...user.user, deleted: true } });
    expect(
      await delivery()
        .install(target, signature)
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'user_not_found' });
    scope.done();
  });

  it('maps channel_not_found on the message to MailboxError(channel_not_found)', async () => {
    const scope = slack()
      .post('/api/users.lookupByEmail')
      .reply(200, fixture('users.lookupByEmail.json'))
      .post('/api/conversations.open')
      .reply(200, fixture('conversations.open.json'))
      .post('/api/chat.postMessage')
      .reply(200, slackError('channel_not_found'));
    const err = await delivery()
      .install(target, signature)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MailboxError);
    expect(err).toMatchObject({ code: 'channel_not_found', providerCode: 'channel_not_found' });
    scope.done();
  });

  it.each([
    ['token_revoked', 200, slackError('token_revoked'), {}, AccessLostError, { code: 'access_lost', providerCode: 'token_revoked' }],
    ['missing_scope', 200, slackError('missing_scope', { needed: 'im:write' }), {}, AccessLostError, { code: 'access_lost', providerCode: 'missing_scope' }],
    ['a 429', 429, slackError('ratelimited'), { 'Retry-After': '1' }, RateLimitedError, { code: 'rate_limited', retryAfterMs: 1000 }],
    ['msg_too_long', 200, slackError('msg_too_long'), {}, MailboxError, { code: 'signature_too_long' }],
    ['msg_blocks_too_long', 200, slackError('msg_blocks_too_long'), {}, MailboxError, { code: 'signature_too_long' }],
    ['internal_error', 200, slackError('internal_error'), {}, TransientError, { code: 'transient', providerCode: 'internal_error' }],
  ] as const)('maps %s on chat.postMessage', async (_name, status, body, headers, cls, data) => {
    const scope = slack()
      .post('/api/users.lookupByEmail')
      .reply(200, fixture('users.lookupByEmail.json'))
      .post('/api/conversations.open')
      .reply(200, fixture('conversations.open.json'))
      .post('/api/chat.postMessage')
      .reply(status, body, headers);
    const err = await delivery()
      .install(target, signature)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(cls);
    expect(err).toMatchObject(data);
    scope.done();
  });

  it('refuses a reply signature and a too-long signature without calling Slack', async () => {
    const d = delivery();
    expect(await d.install(target, { ...signature, kind: 'reply' }).catch((e: unknown) => e)).toMatchObject({ code: 'multi_signatures_not_supported' });
    const long = await d.install(target, { ...signature, html: 'x'.repeat(SLACK_MAX_HTML + 1) }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(MailboxError);
    expect(long).toMatchObject({ code: 'signature_too_long' });
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('cuts a long preview to its budget with an ellipsis, escaping included', () => {
    const out = previewText('<b>'.repeat(2_000), 1_500);
    expect(out.length).toBeLessThanOrEqual(1_500);
    expect(out.startsWith('>&lt;b&gt;')).toBe(true);
    expect(out.endsWith('…')).toBe(true);
  });
});
