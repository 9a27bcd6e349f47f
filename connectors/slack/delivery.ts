/**
 * Slack signature delivery (category `signatures`): for mail clients without an install API, the
 * teammate receives a direct message from the app with a preview of the signature and its HTML as
 * a preformatted snippet to copy and paste.
 *
 *   users.lookupByEmail (the address, then its aliases) -> conversations.open -> chat.postMessage
 *
 * The message: a short heading, the plain-text rendition as a quote (the preview), the HTML in a
 * rich-text preformatted block (copied verbatim: rich text needs no &, <, > escaping), and the
 * version hash. The engine skips the call when the hash is unchanged, so a teammate is messaged
 * only when their signature really changed.
 *
 * Size: a section block's text holds at most 3,000 characters, and Slack refuses a message whose
 * blocks carry more than about 12,000 characters of text in total (msg_blocks_too_long; the markdown
 * block's documented cumulative limit is 12,000). The HTML block therefore takes at most 10,000
 * characters (`maxHtmlLength`, the same budget as Gmail's), leaving room for the preview (cut to
 * fit 1,500 characters) and the heading. Slack's own refusal maps to `signature_too_long`. The
 * 40,000 characters `chat.postMessage` documents concern the message's `text`, not its blocks:
 * messages of about 13,000 characters of blocks are refused (slackapi/bolt-js#2509), so 10,000 is
 * the limit, and the only one the project states (src/render/limits.ts reads it from here).
 *
 * Scopes: users:read, users:read.email (lookupByEmail), im:write (conversations.open), chat:write.
 * https://docs.slack.dev/reference/methods/users.lookupByEmail
 * https://docs.slack.dev/reference/methods/conversations.open
 * https://docs.slack.dev/reference/methods/chat.postMessage
 * https://docs.slack.dev/reference/block-kit/blocks/rich-text-block
 */
import type { KnownBlock, WebClient } from '@slack/web-api';
import {
  defineMailboxInstaller,
  type InstallResult,
  MailboxError,
  type MailboxInstaller,
  type MailboxTarget,
  parseProvider,
  type RenderedSignature,
} from '../types.ts';
import { call, createSlackClient } from './client.ts';
import { SlackConversationsOpen, SlackLookupByEmail, SlackPostMessage, slackConfigSchema, slackCredentialsSchema } from './schemas.ts';

export const SLACK_DELIVERY_SCOPES = ['users:read', 'users:read.email', 'im:write', 'chat:write'] as const;
export const SLACK_MAX_HTML = 10_000;
/** Budget of the quoted preview section (Slack allows 3,000 per section). */
const PREVIEW_MAX = 1_500;

/** Slack mrkdwn needs &, < and > escaped; everything else is shown as typed. */
function escapeMrkdwn(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function quote(s: string): string {
  return s
    .split('\n')
    .map((line) => `>${escapeMrkdwn(line)}`)
    .join('\n');
}

/** The preview as a quote, cut (with an ellipsis) until it fits the budget. */
export function previewText(text: string, max = PREVIEW_MAX): string {
  let source = text.trim() || '(empty signature)';
  let out = quote(source);
  while (out.length > max) {
    source = `${[...source].slice(0, Math.floor([...source].length * 0.9)).join('')}`;
    out = quote(`${source}…`);
  }
  return out;
}

export function signatureMessage(signature: RenderedSignature): { text: string; blocks: KnownBlock[] } {
  return {
    text: 'Your email signature was updated. Open this message for a preview and the HTML to paste into your mail client.',
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: '*Your email signature was updated.*\nHere is how it reads, and below it the HTML to paste into mail clients that are not set up automatically.',
        },
      },
      { type: 'section', text: { type: 'mrkdwn', text: previewText(signature.text) } },
      { type: 'rich_text', elements: [{ type: 'rich_text_preformatted', elements: [{ type: 'text', text: signature.html }] }] },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `Signature version \`${escapeMrkdwn(signature.hash.slice(0, 16))}\`` }] },
    ],
  };
}

export class SlackDelivery implements MailboxInstaller {
  readonly slots = ['primary'] as const;
  readonly maxHtmlLength = SLACK_MAX_HTML;
  private readonly client: WebClient;
  /** users.lookupByEmail, conversations.open, chat.postMessage (more lookups when the address is not the member's). */
  quotaCostFor(): number {
    return 3;
  }

  constructor(client: WebClient) {
    this.client = client;
  }

  /** The Slack member for the address or, failing that, one of its aliases. */
  private async lookup(target: MailboxTarget): Promise<string> {
    let lastError: MailboxError | undefined;
    for (const email of [target.email, ...target.aliases]) {
      try {
        const res = parseProvider(
          SlackLookupByEmail,
          await call('users.lookupByEmail', () => this.client.users.lookupByEmail({ email })),
          'Slack users.lookupByEmail',
        );
        if (res.user.deleted) throw new MailboxError('user_not_found', `the Slack member for ${email} is deactivated`, { providerCode: 'user_deleted' });
        return res.user.id;
      } catch (err) {
        if (!(err instanceof MailboxError && err.code === 'user_not_found')) throw err;
        lastError = err;
      }
    }
    throw lastError!;
  }

  async install(target: MailboxTarget, signature: RenderedSignature): Promise<InstallResult> {
    if (signature.kind !== 'primary') {
      throw new MailboxError('multi_signatures_not_supported', `Slack delivery sends one signature; a ${signature.kind} signature is not sent separately`);
    }
    if (signature.html.length > this.maxHtmlLength) {
      throw new MailboxError(
        'signature_too_long',
        `the signature is ${signature.html.length} characters; a Slack message carries at most ${this.maxHtmlLength}`,
      );
    }
    const user = await this.lookup(target);
    const dm = parseProvider(
      SlackConversationsOpen,
      await call('conversations.open', () => this.client.conversations.open({ users: user })),
      'Slack conversations.open',
    );
    const message = signatureMessage(signature);
    const posted = parseProvider(
      SlackPostMessage,
      await call('chat.postMessage', () => this.client.chat.postMessage({ channel: dm.channel.id, ...message, unfurl_links: false, unfurl_media: false })),
      'Slack chat.postMessage',
    );
    return { providerResponse: { user, channel: posted.channel, ts: posted.ts } };
  }
}

export const slackDelivery = defineMailboxInstaller({
  kind: 'slack',
  capabilities: { delivery: 'additional' },
  scopes: SLACK_DELIVERY_SCOPES,
  configSchema: slackConfigSchema,
  maxHtmlLength: () => SLACK_MAX_HTML,
  credentialsSchema: slackCredentialsSchema,
  create: (ctx) => new SlackDelivery(createSlackClient(ctx)),
});
