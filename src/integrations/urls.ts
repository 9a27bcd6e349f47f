/**
 * The URLs an integration's config points the provider SDKs at (`base_url`, `token_url`, and
 * Microsoft's `beta_url`) get the SSRF guard's rule (src/net/ssrf.ts), since the SDKs send the
 * integration's credentials there:
 * - https, except http to a loopback host where loopback is allowed;
 * - loopback only with ALLOW_INSECURE_WEBHOOKS (tests, local emulators), which the sandbox implies:
 *   `serve` with the sandbox on (no DATABASE_URL, or SANDBOX=1) runs its emulated tenants on loopback;
 * - private addresses (RFC 1918, unique local, carrier-grade NAT) only with
 *   ALLOW_PRIVATE_INTEGRATION_URLS (sovereign clouds, on-premises gateways);
 * - link-local (cloud metadata) and every other reserved range never.
 *
 * `integration connect` checks the config with DNS (every address a name resolves to); every time a
 * connector is built (each sync run, install and photo sync) the syntax and any IP literal are
 * checked again, so a config that was stored another way, or before the rule existed, is refused too.
 */
import type { Config } from '../config.ts';
import { checkUrlSyntax, UnsafeUrlError, validateUrl, type UrlPolicy } from '../net/ssrf.ts';

export const INTEGRATION_URL_KEYS = ['base_url', 'token_url', 'beta_url'] as const;

export type IntegrationUrlConfig = Pick<Config, 'ALLOW_INSECURE_WEBHOOKS' | 'ALLOW_PRIVATE_INTEGRATION_URLS' | 'SANDBOX' | 'DATABASE_URL'>;

/** The policy for integration URLs under this service configuration. */
export function integrationUrlPolicy(config: IntegrationUrlConfig): UrlPolicy {
  const sandbox = config.SANDBOX ?? !config.DATABASE_URL;
  return { allowInsecure: config.ALLOW_INSECURE_WEBHOOKS || sandbox, allowPrivate: config.ALLOW_PRIVATE_INTEGRATION_URLS };
}

/** Thrown for a refused URL; `key` is the config key. */
export class IntegrationUrlError extends Error {
  override readonly name = 'IntegrationUrlError';
  readonly key: string;

  constructor(key: string, cause: UnsafeUrlError) {
    super(`config: ${key}: refused: ${cause.message}`, { cause });
    this.key = key;
  }
}

function urlsOf(config: unknown): [string, string][] {
  if (!config || typeof config !== 'object') return [];
  const c = config as Record<string, unknown>;
  return INTEGRATION_URL_KEYS.filter((k) => typeof c[k] === 'string').map((k) => [k, c[k] as string]);
}

function rethrow(key: string) {
  return (e: unknown): never => {
    if (e instanceof UnsafeUrlError) throw new IntegrationUrlError(key, e);
    throw e;
  };
}

/** The checks that need no DNS (each time a connector is built). */
export function checkIntegrationUrls(config: unknown, policy: UrlPolicy): void {
  for (const [key, url] of urlsOf(config)) {
    try {
      checkUrlSyntax(url, policy);
    } catch (e) {
      rethrow(key)(e);
    }
  }
}

/** The full check, resolving host names (`integration connect`). */
export async function validateIntegrationUrls(config: unknown, policy: UrlPolicy): Promise<void> {
  for (const [key, url] of urlsOf(config)) await validateUrl(url, policy).catch(rethrow(key));
}

/**
 * Where people are sent about an integration (the `dashboard_url` of every remediation that names
 * one, and of the integration itself): its page of the console, or the console's integrations page
 * when no single integration is meant. An integration's own stored `dashboard_url` wins. Every
 * dashboard URL about integrations is built here, so that changing where they point is one edit.
 */
export function integrationDashboardUrl(publicBaseUrl: string, integration?: { id: string; dashboard_url?: string | null }): string {
  if (integration?.dashboard_url) return integration.dashboard_url;
  return `${publicBaseUrl.replace(/\/+$/, '')}/console/integrations${integration ? `/${encodeURIComponent(integration.id)}` : ''}`;
}
