/**
 * App-only authentication for Microsoft Graph: the OAuth 2.0 client credentials grant through
 * `@azure/identity`'s ClientSecretCredential (MSAL underneath, which caches the token until shortly
 * before it expires).
 *
 * https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow
 */
import { AzureAuthorityHosts, ClientSecretCredential } from '@azure/identity';
import type { MicrosoftConfig, MicrosoftCredentials } from './schemas.ts';

export const DEFAULT_GRAPH_URL = 'https://graph.microsoft.com/v1.0';
export const DEFAULT_AUTHORITY_HOST: string = AzureAuthorityHosts.AzurePublicCloud;

/** Authority hosts MSAL knows without asking the instance discovery endpoint. */
const KNOWN_AUTHORITY_HOSTS = new Set<string>(Object.values(AzureAuthorityHosts).map((h) => new URL(h).host));

/** The application permissions an admin grants to the app registration. */
/** MailboxSettings.Read tells shared mailboxes from people who left (directory.ts); without it, every disabled account counts as removed. */
export const DIRECTORY_PERMISSIONS = ['User.Read.All', 'GroupMember.Read.All', 'MailboxSettings.Read'] as const;
export const OUTLOOK_PERMISSIONS = ['MailboxConfigItem.ReadWrite', 'User.Read.All'] as const;
export const PHOTO_PERMISSIONS = ['ProfilePhoto.Read.All'] as const;

export interface GraphAuth {
  /** The `.default` scope of the Graph resource in use (national clouds have their own). */
  readonly scope: string;
  /** A bearer token for Graph. Throws the credential's own error; graph.ts maps it. */
  token(): Promise<string>;
}

export function createGraphAuth(
  config: Pick<MicrosoftConfig, 'base_url' | 'token_url' | 'ca_cert'>,
  credentials: MicrosoftCredentials,
  signal?: AbortSignal,
): GraphAuth {
  const authorityHost = (config.token_url ?? DEFAULT_AUTHORITY_HOST).replace(/\/+$/, '');
  const credential = new ClientSecretCredential(credentials.tenant_id, credentials.client_id, credentials.client_secret, {
    authorityHost,
    // A sovereign or emulated authority is not in Microsoft's instance discovery list; trust the configured host.
    disableInstanceDiscovery: !KNOWN_AUTHORITY_HOSTS.has(new URL(authorityHost).host),
    // The sync engine retries from the error code; no hidden retries here.
    retryOptions: { maxRetries: 0 },
    // A configured CA replaces the public ones for this credential only.
    ...(config.ca_cert ? { tlsOptions: { ca: config.ca_cert } } : {}),
  });
  const scope = `${new URL(config.base_url ?? DEFAULT_GRAPH_URL).origin}/.default`;
  let inFlight: Promise<string> | undefined;
  return {
    scope,
    token() {
      // Calls made at once (the first users page beside the groups listing) share one token
      // request; once it is answered, the credential's cache answers the next ones.
      inFlight ??= credential
        .getToken(scope, signal ? { abortSignal: signal } : {})
        .then((t) => t.token)
        .finally(() => (inFlight = undefined));
      return inFlight;
    },
  };
}
