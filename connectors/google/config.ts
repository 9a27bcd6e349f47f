/**
 * Integration config of the Google Workspace connectors, and the API client options built from it.
 *
 * Keys (all optional):
 * - `base_url`: API origin override (scheme, host and port; a path is ignored by the client
 *   library), applied to both admin.googleapis.com and gmail.googleapis.com. Default: Google's.
 * - `token_url`: token endpoint override. Default: https://oauth2.googleapis.com/token.
 * - `customer`: the Workspace account to list (default `my_customer`, the admin's own account).
 * - `domain`: list only the users and groups of this domain instead of the whole account.
 * - `scope`: which users to sync; empty or absent means everyone. A user matching any entry is in
 *   scope: `org_units` (paths, sub-units included), `groups` (group emails or ids, nested
 *   memberships included), `emails` (primary addresses or aliases). Users out of scope are left
 *   out of the listing, so the engine removes them like deleted users.
 * - `request_timeout_ms`: per-request timeout (default 30000).
 *
 * Keys this connector does not know (engine settings such as `deletion_guard`) pass through.
 */
import { z } from 'zod';
import { baseConfigSchema } from '../types.ts';

export const DEFAULT_TIMEOUT_MS = 30_000;

export const googleScopeSchema = z.object({
  org_units: z.array(z.string().regex(/^\//, 'an org unit path starts with /')).default([]),
  groups: z.array(z.string().min(1)).default([]),
  emails: z.array(z.email()).default([]),
});
export type GoogleScope = z.infer<typeof googleScopeSchema>;

export const googleConfigSchema = z.looseObject({
  ...baseConfigSchema.shape,
  customer: z.string().min(1).default('my_customer'),
  domain: z.string().min(1).optional(),
  scope: googleScopeSchema.optional(),
  request_timeout_ms: z.number().int().positive().max(300_000).default(DEFAULT_TIMEOUT_MS),
});
export type GoogleConfig = z.infer<typeof googleConfigSchema>;

/**
 * Options for `admin()` / `gmail()`: the per-API `rootUrl` (the global `google.options` one is not
 * applied to per-API packages), no SDK retries, and the request timeout.
 */
export function apiOptions(config: Pick<GoogleConfig, 'base_url' | 'request_timeout_ms'>) {
  return {
    ...(config.base_url ? { rootUrl: config.base_url.endsWith('/') ? config.base_url : `${config.base_url}/` } : {}),
    retry: false,
    timeout: config.request_timeout_ms,
  };
}
