/**
 * How much HTML each destination accepts. Checked before any provider call, so an oversized
 * signature fails with `signature_too_long` and its size, not with a provider's 400.
 *
 * Sizes are counted in UTF-16 code units (`string.length`), which is never less than the number of
 * characters a provider counts, so a signature that passes here is not refused for its length.
 *
 * Each provider's number lives in its connector (the definition's `maxHtmlLength`), the add-in's
 * here; this table only names them, for the content schema, previews and docs:
 *
 * - gmail 10,000: `users.settings.sendAs.patch` refuses longer signatures ("Signature exceeds maximum
 *   length of 10000 characters"); the limit includes the markup (connectors/google/gmail.ts).
 * - outlook 30,000: the Outlook add-in (integration config `mode: "addin"`) inserts the signature
 *   with `body.setSignatureAsync`, which documents a 30,000-character maximum.
 * - outlook_owa 8,000: a push to Outlook on the web's `OWA.UserOptions` (which documents none) keeps
 *   to the integration's `max_html_length`, 8,000 by default (connectors/microsoft/outlook.ts).
 * - slack 10,000: the DM carries the HTML in a block, and Slack refuses messages of about 13,000
 *   characters of blocks (connectors/slack/delivery.ts); `chat.postMessage`'s 40,000 concern `text`.
 *
 * Which limit applies to a mailbox is its integration's: src/install/destinations.ts.
 */
import { MailboxError } from '../../connectors/types.ts';
import { GMAIL_MAX_SIGNATURE_LENGTH } from '../../connectors/google/gmail.ts';
import { DEFAULT_OUTLOOK_MAX_HTML } from '../../connectors/microsoft/outlook.ts';
import { SLACK_MAX_HTML } from '../../connectors/slack/delivery.ts';

/** `body.setSignatureAsync`'s maximum: what the Outlook add-in inserts at most. */
export const ADDIN_MAX_SIGNATURE = 30_000;

export const SIGNATURE_SIZE_LIMITS = {
  gmail: GMAIL_MAX_SIGNATURE_LENGTH,
  outlook: ADDIN_MAX_SIGNATURE,
  outlook_owa: DEFAULT_OUTLOOK_MAX_HTML,
  slack: SLACK_MAX_HTML,
} as const;

export type Destination = keyof typeof SIGNATURE_SIZE_LIMITS;

export const DESTINATIONS = Object.keys(SIGNATURE_SIZE_LIMITS) as Destination[];

export function signatureSize(html: string): number {
  return html.length;
}

export interface SizeCheck {
  destination: Destination;
  size: number;
  limit: number;
  fits: boolean;
}

/** The size against every destination's limit (for previews and diagnostics). */
export function sizeReport(html: string): SizeCheck[] {
  const size = signatureSize(html);
  return DESTINATIONS.map((destination) => {
    const limit = SIGNATURE_SIZE_LIMITS[destination];
    return { destination, size, limit, fits: size <= limit };
  });
}

/**
 * Throws `MailboxError('signature_too_long')` when the HTML is larger than the destination takes.
 * `destination` is a known destination or an explicit limit (an installer's `maxHtmlLength`).
 */
export function assertSignatureFits(html: string, destination: Destination | number): void {
  const limit = typeof destination === 'number' ? destination : SIGNATURE_SIZE_LIMITS[destination];
  const size = signatureSize(html);
  if (size > limit) {
    const where = typeof destination === 'number' ? 'this destination' : destination;
    throw new MailboxError('signature_too_long', `The signature is ${size} characters of HTML; ${where} accepts at most ${limit}.`);
  }
}
