/**
 * Outlook signature install (category `signatures`) through Microsoft Graph's mailbox
 * configuration items: the beta userConfiguration API on the mailbox's root folder, item
 * `OWA.UserOptions`, the same folder associated item Outlook on the web has always kept its
 * options in.
 *
 *   GET   /beta/users/{id}/mailFolders/root/userConfigurations/OWA.UserOptions
 *   PATCH (same URL) with the item's full structuredData, our four keys replaced
 *   POST  /beta/users/{id}/mailFolders/root/userConfigurations  when the item does not exist yet
 *
 * A PATCH replaces the whole structuredData list, so the item is read first and every other entry
 * (time zone, reading pane, theme...) is written back untouched. The keys written:
 *   signaturehtml            the rendered HTML
 *   signaturetext            the plain-text rendition
 *   autoaddsignature         true: add the signature to new messages
 *   autoaddsignatureonreply  true: add it to replies and forwards too
 *
 * What this covers: the single OWA signature of the mailbox, as used by Outlook on the web and the
 * new Outlook when roaming signatures are turned off for the tenant
 * (Set-OrganizationConfig -PostponeRoamingSignaturesUntilLater $true), and by older clients that
 * read the OWA signature.
 *
 * What it does not cover:
 * - Roaming (cloud) signatures. When they are on, which is the Exchange Online default, Outlook on
 *   the web, the new Outlook and Outlook for Windows/Mac keep named signatures in a separate store
 *   that no public Graph API writes; the value written here is then ignored by those clients.
 * - Outlook for Windows local signatures (%APPDATA%\Microsoft\Signatures) and the mobile apps.
 * - A separate reply signature: OWA.UserOptions holds one signature; `autoaddsignatureonreply` only
 *   says whether that same signature goes on replies. Hence `slots: ['primary']`.
 * For those clients, the Outlook add-in (the add-in pull endpoint) inserts the signature at compose
 * time.
 *
 * The userConfiguration API is a preview (beta) API and needs the MailboxConfigItem.ReadWrite
 * application permission. https://learn.microsoft.com/graph/api/resources/userconfiguration?view=graph-rest-beta
 */
import { defineMailboxInstaller, type InstallResult, MailboxError, type MailboxInstaller, type MailboxTarget, type RenderedSignature } from '../types.ts';
import { OUTLOOK_PERMISSIONS } from './auth.ts';
import { GraphApi, type GraphContext } from './graph.ts';
import { microsoftConfigSchema, microsoftCredentialsSchema, type StructuredDataEntry, UserConfiguration } from './schemas.ts';

export const OWA_USER_OPTIONS = 'OWA.UserOptions';
/** OWA.UserOptions lives on the mailbox's root folder (well-known name `root`). */
export const OWA_OPTIONS_FOLDER = 'root';

/**
 * Microsoft documents no length limit for signaturehtml in this item. 8,000 characters is the
 * limit Outlook on the web's own signature editor is commonly reported to enforce, so a signature
 * within it behaves the same whether it was typed or installed. `max_html_length` overrides it.
 */
export const DEFAULT_OUTLOOK_MAX_HTML = 8_000;

const SIGNATURE_KEYS = ['signaturehtml', 'signaturetext', 'autoaddsignature', 'autoaddsignatureonreply'] as const;

function entry(key: string, type: 'string' | 'boolean', value: string): StructuredDataEntry {
  return { keyEntry: { type: 'string', values: [key] }, valueEntry: { type, values: [value] } };
}

function keyOf(e: StructuredDataEntry): string {
  return (e.keyEntry.values?.[0] ?? '').toLowerCase();
}

/** An entry as the update API takes it: type and values only (no `@odata.type` annotations). */
function clean(e: StructuredDataEntry): StructuredDataEntry {
  return {
    keyEntry: { type: e.keyEntry.type, values: e.keyEntry.values ?? [] },
    valueEntry: { type: e.valueEntry.type, values: e.valueEntry.values ?? [] },
  };
}

export function signatureEntries(signature: RenderedSignature): StructuredDataEntry[] {
  return [
    entry('signaturehtml', 'string', signature.html),
    entry('signaturetext', 'string', signature.text),
    entry('autoaddsignature', 'boolean', 'true'),
    entry('autoaddsignatureonreply', 'boolean', 'true'),
  ];
}

/** The item's entries with ours replaced (or added); the others are kept in their order. */
export function mergeEntries(existing: readonly StructuredDataEntry[], ours: readonly StructuredDataEntry[]): StructuredDataEntry[] {
  const replaced = new Set<string>(SIGNATURE_KEYS);
  return [...existing.filter((e) => !replaced.has(keyOf(e))).map(clean), ...ours];
}

export class OutlookInstaller implements MailboxInstaller {
  readonly slots = ['primary'] as const;
  readonly maxHtmlLength: number;
  /** The read of the item, then its write: the PATCH replaces the whole item, so the read cannot be skipped. */
  quotaCostFor(): number {
    return 2;
  }
  private readonly graph: GraphApi;

  constructor(graph: GraphApi, maxHtmlLength: number) {
    this.graph = graph;
    this.maxHtmlLength = maxHtmlLength;
  }

  async install(target: MailboxTarget, signature: RenderedSignature): Promise<InstallResult> {
    if (signature.kind !== 'primary') {
      throw new MailboxError(
        'multi_signatures_not_supported',
        `Outlook on the web holds one signature per mailbox; a ${signature.kind} signature cannot be installed separately`,
      );
    }
    if (signature.html.length > this.maxHtmlLength) {
      throw new MailboxError('signature_too_long', `the signature is ${signature.html.length} characters; Outlook takes at most ${this.maxHtmlLength}`);
    }
    // Graph addresses a user by id or user principal name; the primary address is not always the UPN.
    const user = encodeURIComponent(target.externalId ?? target.email);
    const folder = `users/${user}/mailFolders/${OWA_OPTIONS_FOLDER}/userConfigurations`;
    const itemUrl = this.graph.url(`${folder}/${OWA_USER_OPTIONS}`, {}, this.graph.betaUrl);
    const ours = signatureEntries(signature);

    let existing: StructuredDataEntry[] | undefined;
    try {
      // https://learn.microsoft.com/graph/api/userconfiguration-get?view=graph-rest-beta
      const item = await this.graph.json('GET', itemUrl, UserConfiguration, 'Microsoft Graph userConfiguration', { scope: 'mailbox' });
      existing = item.structuredData ?? [];
    } catch (err) {
      // No OWA.UserOptions yet (Outlook on the web never opened): create it below. A missing user
      // is a different 404 and stays an error.
      if (!(err instanceof MailboxError && err.status === 404 && /ItemNotFound$/i.test(err.providerCode ?? ''))) throw err;
    }

    if (existing) {
      // https://learn.microsoft.com/graph/api/userconfiguration-update?view=graph-rest-beta
      const structuredData = mergeEntries(existing, ours);
      const res = await this.graph.send('PATCH', itemUrl, { scope: 'mailbox', body: { structuredData } });
      await res.body?.cancel();
      return {
        providerResponse: {
          action: 'updated',
          status: res.status,
          item: OWA_USER_OPTIONS,
          folder: OWA_OPTIONS_FOLDER,
          keys: SIGNATURE_KEYS,
          keptEntries: structuredData.length - ours.length,
        },
      };
    }
    // https://learn.microsoft.com/graph/api/mailsearchfolder-post-userconfigurations?view=graph-rest-beta
    const res = await this.graph.send('POST', this.graph.url(folder, {}, this.graph.betaUrl), {
      scope: 'mailbox',
      body: { id: OWA_USER_OPTIONS, structuredData: ours },
    });
    await res.body?.cancel();
    return {
      providerResponse: { action: 'created', status: res.status, item: OWA_USER_OPTIONS, folder: OWA_OPTIONS_FOLDER, keys: SIGNATURE_KEYS, keptEntries: 0 },
    };
  }
}

export const outlookInstaller = defineMailboxInstaller({
  kind: 'microsoft_entra',
  capabilities: { addinMode: true },
  scopes: OUTLOOK_PERMISSIONS,
  configSchema: microsoftConfigSchema,
  credentialsSchema: microsoftCredentialsSchema,
  maxHtmlLength: (config) => config.max_html_length ?? DEFAULT_OUTLOOK_MAX_HTML,
  create: (ctx) => new OutlookInstaller(new GraphApi(ctx satisfies GraphContext), ctx.config.max_html_length ?? DEFAULT_OUTLOOK_MAX_HTML),
});
