/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com), through the specification's own
 * reference library, `standardwebhooks`.
 *
 * - The signing secret is `whsec_` + base64 of 32 random bytes, one per endpoint.
 * - Each request carries `webhook-id` (the delivery id, the same on every retry, so receivers can
 *   deduplicate), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
 *   (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`).
 */
import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';

/** A new endpoint signing secret, in the `whsec_<base64>` form receivers pass to their verifier. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(32).toString('base64');
}

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three Standard Webhooks headers for one attempt of one delivery. */
export function signatureHeaders(secret: string, messageId: string, body: string, at: Date = new Date()): SignatureHeaders {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body),
  };
}
