/**
 * Who is asking the add-in route, and which addresses they may sign as.
 *
 * - An Entra ID access token (single sign-on, the default): verified by entra.ts (a delegated token
 *   with the add-in's scope; app-only tokens are refused). The token's tenant picks the workspace
 *   (the one whose Microsoft integration is connected to it). The person is the token's `tid` +
 *   `oid` and nothing else: the teammate synced from that tenant's directory with that Entra object
 *   id. They may sign as that teammate's addresses (primary and aliases) and, being a teammate of
 *   the workspace, as its shared mailboxes: Graph does not publish who holds Send As on a shared
 *   mailbox, so Exchange decides who sends from it, and its signature is no secret (every message
 *   from it carries it). An address the workspace does not know has no signature to read: it
 *   answers as one without a signature. A name claim (`preferred_username`, `upn`) is never read.
 * - An add-in key (key-only mode, for tenants that cannot register an app): any address of its
 *   workspace. Weaker: the key is in the manifest every user receives, so anyone holding it reads any
 *   signature of the workspace. Unknown addresses answer exactly as known ones without a signature.
 *
 * What is kept per process: the tenants (a minute), the teammates of each person (a minute, keyed
 * by workspace, tenant and object id: the only inputs of the lookup, so a kept answer is the one a
 * fresh lookup gives), and verified add-in keys (10 s), unknown keys included.
 */
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../context.ts';
import { verifyApiKey } from '../db/apiKeys.ts';
import { microsoftIntegrations } from '../integrations/queries.ts';
import { teammatesBySource } from '../teammates/addresses.ts';
import { ApiError } from '../errors.ts';
import { DEFAULT_AUTHORITY, EntraVerifier, TokenRefusedError, type TenantBinding, type VerifiedUser } from './entra.ts';
import { entraAudience } from './manifest.ts';

export type Caller = { mode: 'token'; workspaceId: string; user: VerifiedUser; limitKey: string } | { mode: 'key'; workspaceId: string; limitKey: string };

const TENANTS_KEPT_MS = 60_000;
const USERS_KEPT_MS = 60_000;
const KEYS_KEPT_MS = 10_000;

interface CallerState {
  verifier: EntraVerifier | undefined;
  tenants: { at: number; map: Promise<Map<string, TenantBinding | 'ambiguous'>> } | undefined;
  users: LRUCache<string, Promise<string[]>>;
  /** Add-in keys verified lately, by sha256: a revoked key stops working within KEYS_KEPT_MS. */
  keys: LRUCache<string, Promise<{ workspaceId: string; keyId: string } | undefined>>;
}

const states = new WeakMap<AppContext, CallerState>();

/** Every live Microsoft integration's tenant, from its (encrypted) credentials. */
async function loadTenants(ctx: AppContext): Promise<Map<string, TenantBinding | 'ambiguous'>> {
  const rows = await microsoftIntegrations(ctx.pool);
  const map = new Map<string, TenantBinding | 'ambiguous'>();
  for (const r of rows) {
    let tid: unknown;
    try {
      tid = (ctx.secrets.decryptJson(r.credentials) as { tenant_id?: unknown }).tenant_id;
    } catch {
      continue;
    }
    if (typeof tid !== 'string') continue;
    const key = tid.toLowerCase();
    const binding: TenantBinding = {
      workspaceId: r.workspace_id,
      integrationIds: [r.id],
      authority: typeof r.config.token_url === 'string' ? r.config.token_url : DEFAULT_AUTHORITY,
      ...(typeof r.config.ca_cert === 'string' ? { ca: r.config.ca_cert } : {}),
    };
    const seen = map.get(key);
    if (!seen) map.set(key, binding);
    else if (seen !== 'ambiguous' && seen.workspaceId !== binding.workspaceId) map.set(key, 'ambiguous');
    else if (seen !== 'ambiguous') seen.integrationIds.push(r.id);
  }
  return map;
}

function stateOf(ctx: AppContext): CallerState {
  let s = states.get(ctx);
  if (s) return s;
  const audience = entraAudience(ctx.config);
  const created: CallerState = {
    verifier: undefined,
    tenants: undefined,
    users: new LRUCache({ max: 50_000, ttl: USERS_KEPT_MS }),
    keys: new LRUCache({ max: 10_000, ttl: KEYS_KEPT_MS }),
  };
  if (audience && ctx.config.ADDIN_ENTRA_CLIENT_ID) {
    created.verifier = new EntraVerifier({
      audiences: [ctx.config.ADDIN_ENTRA_CLIENT_ID, audience],
      findTenant: async (tid) => {
        if (!created.tenants || Date.now() - created.tenants.at > TENANTS_KEPT_MS) {
          const map = loadTenants(ctx);
          created.tenants = { at: Date.now(), map };
          map.catch(() => (created.tenants = undefined));
        }
        return (await created.tenants.map).get(tid);
      },
    });
  }
  states.set(ctx, (s = created));
  return s;
}

/** Forgets the tenants and users kept (tests that connect a tenant mid-file). */
export function forgetCallers(ctx: AppContext): void {
  states.delete(ctx);
}

const looksLikeJwt = (t: string) => /^eyJ[\w-]*\.[\w-]*\.[\w-]*$/.test(t);

/** The caller of a request with this bearer credential; 401 when it is refused. */
export async function resolveCaller(ctx: AppContext, bearer: string | undefined): Promise<Caller> {
  if (!bearer) throw ApiError.unauthorized('Send Authorization: Bearer <Entra access token or add-in key>.');
  if (looksLikeJwt(bearer)) {
    const { verifier } = stateOf(ctx);
    if (!verifier)
      throw new ApiError(
        401,
        'authentication_error',
        'sso_not_configured',
        'This service has no Entra app for the add-in (ADDIN_ENTRA_CLIENT_ID); use an add-in key.',
      );
    try {
      const user = await verifier.verify(bearer);
      return { mode: 'token', workspaceId: user.workspaceId, user, limitKey: `u:${user.tenantId}:${user.oid}` };
    } catch (e) {
      if (e instanceof TokenRefusedError) throw new ApiError(401, 'authentication_error', e.code, e.message);
      throw e;
    }
  }
  const { keys } = stateOf(ctx);
  // The one-shot hash: a Hash object per request cost more than the rest of the key check.
  const digest = crypto.hash('sha256', bearer, 'base64url');
  let verified = keys.get(digest);
  if (!verified) {
    verified = verifyApiKey(ctx.pool, bearer, 'addin');
    keys.set(digest, verified);
    verified.catch(() => keys.delete(digest));
  }
  const key = await verified;
  if (!key) throw ApiError.unauthorized('Missing or invalid add-in key.');
  return { mode: 'key', workspaceId: key.workspaceId, limitKey: `k:${key.keyId}` };
}

/**
 * The teammates a signed-in user is: those synced from their tenant's directory (the workspace's
 * Microsoft integrations connected to it) with their Entra object id, not deleted. Kept a minute
 * under the very inputs of the lookup, so a kept answer decides as a fresh one.
 */
function teammatesOf(ctx: AppContext, user: VerifiedUser): Promise<string[]> {
  const s = stateOf(ctx);
  const key = `${user.workspaceId}:${user.tenantId}:${user.oid}:${user.integrationIds.join(',')}`;
  const kept = s.users.get(key);
  if (kept) return kept;
  const p = teammatesBySource(ctx.pool, user.workspaceId, user.integrationIds, user.oid);
  s.users.set(key, p);
  p.catch(() => s.users.delete(key));
  return p;
}

/**
 * Whether the signed-in user may sign as the address: an address of the teammate they are (by
 * `tid` + `oid`), or a shared mailbox of the workspace when they are one of its teammates. An
 * address the workspace does not know is allowed: its answer carries no signature, whoever asks.
 */
export async function mayUse(ctx: AppContext, user: VerifiedUser, email: { teammateId: string; sharedMailbox: boolean } | null): Promise<boolean> {
  if (!email) return true;
  const mine = await teammatesOf(ctx, user);
  if (email.sharedMailbox) return mine.length > 0;
  return mine.includes(email.teammateId);
}
