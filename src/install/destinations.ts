/**
 * Where an integration puts a signature, and how much HTML it takes there: the one answer for the
 * install (which refuses a larger signature with `signature_too_long` before any provider call,
 * `install replay --dry-run` included) and for the compatibility report's verdict per mailbox.
 *
 * - An integration in add-in mode (`isAddinMode`, src/integrations/integrations.ts): the Outlook add-in inserts the signature with
 *   `body.setSignatureAsync`, 30,000 characters at most (ADDIN_MAX_SIGNATURE).
 * - Otherwise the connector's own limit for the integration's config (the definition's
 *   `maxHtmlLength`: Gmail 10,000; Outlook on the web 8,000 or the config's `max_html_length`;
 *   Slack 10,000).
 */
import { mailboxInstallers } from '../../connectors/registry.ts';
import { isAddinMode, type IntegrationRow } from '../integrations/integrations.ts';
import { ADDIN_MAX_SIGNATURE } from '../render/limits.ts';

/** Which limit applies: the add-in's, or the provider's write. */
export type DestinationWay = 'addin' | 'provider';

export interface DestinationLimit {
  way: DestinationWay;
  /** Characters of HTML the destination takes at most. */
  limit: number;
  /** In words, for messages: "the Outlook add-in", "google_workspace". */
  words: string;
}

/** The destination's limit for this integration (kind and config). */
export function destinationLimit(integration: Pick<IntegrationRow, 'kind' | 'config'>): DestinationLimit {
  if (isAddinMode(integration)) return { way: 'addin', limit: ADDIN_MAX_SIGNATURE, words: 'the Outlook add-in' };
  const def = mailboxInstallers[integration.kind];
  if (!def?.maxHtmlLength) throw new Error(`no signature size limit is declared for ${integration.kind} installs`);
  const parsed = def.configSchema.safeParse(integration.config);
  return { way: 'provider', limit: def.maxHtmlLength(parsed.success ? parsed.data : integration.config), words: integration.kind };
}
