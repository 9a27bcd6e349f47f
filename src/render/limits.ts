/**
 * How much HTML each destination accepts. Checked before any provider call, so an oversized
 * signature fails with `signature_too_long` and its size, not with a provider's 400.
 *
 * Sizes are counted in UTF-16 code units (`string.length`), which is never less than the number of
 * characters a provider counts, so a signature that passes here is not refused for its length.
 *
 * - gmail 10,000: `users.settings.sendAs.patch` refuses longer signatures ("Signature exceeds maximum
 *   length of 10000 characters"); the limit includes the markup.
 * - outlook 30,000: the Outlook add-in path (`body.setSignatureAsync`) documents a 30,000-character
 *   maximum. A push to OWA's `OWA.UserOptions` (which documents none) keeps to the integration's
 *   `max_html_length`, 8,000 by default (`DEFAULT_OUTLOOK_MAX_HTML` in connectors/microsoft/outlook.ts),
 *   checked by the install against the installer's `maxHtmlLength`.
 * - slack 39,000: Slack delivers the HTML as text in a DM, and `chat.postMessage` truncates text
 *   beyond 40,000 characters; 1,000 are kept for the message's own words and formatting.
 */
import { MailboxError } from '../../connectors/types.ts';

export const SIGNATURE_SIZE_LIMITS = {
  gmail: 10_000,
  outlook: 30_000,
  slack: 39_000,
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
