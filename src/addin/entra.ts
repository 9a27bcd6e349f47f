/**
 * Verifies the Entra ID access token the Outlook add-in gets from Office (single sign-on,
 * `OfficeRuntime.auth.getAccessToken`) with `jose`: the signature against the tenant's published
 * keys (its OpenID metadata's `jwks_uri`), the issuer (the metadata's), the audience (the add-in's
 * app: its client id or its Application ID URI), expiry and not-before (one minute of clock skew).
 * Only RS256 is accepted, so an unsigned (`alg: none`) or HMAC token is refused.
 *
 * The token must be a delegated one, made for a signed-in person: its `scp` (the delegated scopes)
 * must hold the add-in's scope `access_as_user`. An app-only token (client credentials: `roles`
 * and no `scp`, `idtyp: app`) is refused, whatever else it carries. The person is the token's
 * tenant and object id (`tid` + `oid`), never a name claim: `preferred_username`, `upn` and
 * `email` are not read (a user can hold another person's address in them, and Microsoft says they
 * must not be used for authorization).
 * https://learn.microsoft.com/entra/identity-platform/access-token-claims-reference (scp, roles, idtyp, oid)
 * https://learn.microsoft.com/entra/identity-platform/claims-validation (use tid + oid, not preferred_username)
 *
 * The token's tenant (`tid`) picks the workspace: the one whose Microsoft integration is connected to
 * that tenant. Keys are read from that integration's authority (config `token_url`, default
 * https://login.microsoftonline.com; with its `ca_cert`), so national clouds and the sandbox's
 * emulated tenant work the same way.
 *
 * https://learn.microsoft.com/entra/identity-platform/access-tokens#validate-tokens
 */
import { createRemoteJWKSet, customFetch, decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { Agent } from 'undici';

export const DEFAULT_AUTHORITY = 'https://login.microsoftonline.com';

/** A workspace's Microsoft integration bound to a tenant. */
export interface TenantBinding {
  workspaceId: string;
  /** The workspace's Microsoft integrations connected to the tenant: its people are the teammates they synced. */
  integrationIds: string[];
  /** Authority host, e.g. https://login.microsoftonline.com. */
  authority: string;
  ca?: string;
}

export type TenantLookup = (tenantId: string) => Promise<TenantBinding | 'ambiguous' | undefined>;

export class TokenRefusedError extends Error {
  readonly code: 'invalid_token' | 'unknown_tenant';
  constructor(code: 'invalid_token' | 'unknown_tenant', message: string) {
    super(message);
    this.code = code;
    this.name = 'TokenRefusedError';
  }
}

export interface VerifiedUser {
  workspaceId: string;
  /** The workspace's Microsoft integrations connected to the token's tenant. */
  integrationIds: string[];
  tenantId: string;
  /** The user's object id in the tenant (lower case). */
  oid: string;
}

/** The delegated scope the add-in's app exposes (docs/outlook-addin.md, the app registration). */
export const ADDIN_SCOPE = 'access_as_user';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KEYS_KEPT_MS = 24 * 3600_000;

interface TenantKeys {
  issuer: string;
  jwks: ReturnType<typeof createRemoteJWKSet>;
  at: number;
}

/** The object id of the person a verified delegated token was issued to; refuses app-only tokens. */
function delegatedUser(payload: JWTPayload): string {
  const scopes = typeof payload.scp === 'string' ? payload.scp.split(' ') : [];
  if (payload.idtyp === 'app' || !scopes.length)
    throw new TokenRefusedError('invalid_token', 'The token is an app-only token (no delegated scope, scp): the add-in needs a signed-in user.');
  if (!scopes.includes(ADDIN_SCOPE)) throw new TokenRefusedError('invalid_token', `The token does not carry the add-in's delegated scope ${ADDIN_SCOPE}.`);
  const oid = payload.oid;
  if (typeof oid !== 'string' || !GUID.test(oid)) throw new TokenRefusedError('invalid_token', 'The token names no user object id (oid).');
  return oid.toLowerCase();
}

export class EntraVerifier {
  readonly #keys = new Map<string, Promise<TenantKeys>>();
  private readonly opts: { audiences: string[]; findTenant: TenantLookup; timeoutMs?: number };

  constructor(opts: { audiences: string[]; findTenant: TenantLookup; timeoutMs?: number }) {
    this.opts = opts;
  }

  async verify(token: string): Promise<VerifiedUser> {
    let claims: JWTPayload;
    try {
      claims = decodeJwt(token);
    } catch {
      throw new TokenRefusedError('invalid_token', 'The bearer token is not a JWT.');
    }
    const tid = claims.tid;
    if (typeof tid !== 'string' || !GUID.test(tid)) throw new TokenRefusedError('invalid_token', 'The token names no Entra tenant (tid).');
    const binding = await this.opts.findTenant(tid.toLowerCase());
    if (binding === 'ambiguous')
      throw new TokenRefusedError('unknown_tenant', 'More than one workspace is connected to this Microsoft tenant; ask the service operator.');
    if (!binding) throw new TokenRefusedError('unknown_tenant', 'No workspace has a Microsoft integration connected to this tenant.');
    const keys = await this.keysFor(binding, tid.toLowerCase());
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys.jwks, {
        issuer: keys.issuer,
        audience: this.opts.audiences,
        algorithms: ['RS256'],
        clockTolerance: 60,
        requiredClaims: ['exp', 'oid'],
      }));
    } catch (e) {
      const code = (e as { code?: string }).code ?? 'ERR_JWT_INVALID';
      throw new TokenRefusedError('invalid_token', `The token was refused (${code}): ${(e as Error).message}`);
    }
    return { workspaceId: binding.workspaceId, integrationIds: binding.integrationIds, tenantId: tid.toLowerCase(), oid: delegatedUser(payload) };
  }

  /** The tenant's issuer and signing keys, from its OpenID metadata; kept a day (jose refetches unknown key ids). */
  private keysFor(binding: TenantBinding, tid: string): Promise<TenantKeys> {
    const authority = binding.authority.replace(/\/+$/, '');
    const cacheKey = `${authority}|${tid}|${binding.ca ? 'ca' : ''}`;
    const kept = this.#keys.get(cacheKey);
    if (kept) return kept;
    const loading = this.loadKeys(authority, tid, binding.ca);
    this.#keys.set(cacheKey, loading);
    loading.then(
      (k) => setTimeout(() => this.#keys.get(cacheKey) === loading && this.#keys.delete(cacheKey), KEYS_KEPT_MS - (Date.now() - k.at)).unref(),
      () => this.#keys.delete(cacheKey),
    );
    return loading;
  }

  private async loadKeys(authority: string, tid: string, ca: string | undefined): Promise<TenantKeys> {
    const dispatcher = ca ? new Agent({ connect: { ca } }) : undefined;
    const get = (url: string, init: RequestInit = {}) =>
      fetch(url, { ...init, signal: AbortSignal.timeout(this.opts.timeoutMs ?? 5000), ...(dispatcher ? { dispatcher } : {}) } as RequestInit);
    const metadataUrl = `${authority}/${tid}/v2.0/.well-known/openid-configuration`;
    let meta: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await get(metadataUrl);
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      meta = (await res.json()) as typeof meta;
    } catch (e) {
      throw new TokenRefusedError('unknown_tenant', `The tenant's OpenID metadata could not be read from ${metadataUrl}: ${(e as Error).message}`);
    }
    if (typeof meta.issuer !== 'string' || typeof meta.jwks_uri !== 'string')
      throw new TokenRefusedError('unknown_tenant', `The tenant's OpenID metadata has no issuer or jwks_uri.`);
    const jwksUri = new URL(meta.jwks_uri);
    // The keys must come from the authority itself, not from wherever the metadata points.
    if (jwksUri.origin !== new URL(authority).origin)
      throw new TokenRefusedError('unknown_tenant', `The tenant's jwks_uri (${jwksUri.origin}) is not on its authority (${authority}).`);
    const jwks = createRemoteJWKSet(jwksUri, {
      timeoutDuration: this.opts.timeoutMs ?? 5000,
      cooldownDuration: 30_000,
      cacheMaxAge: KEYS_KEPT_MS,
      [customFetch]: (url: string, init: RequestInit) => fetch(url, { ...init, ...(dispatcher ? { dispatcher } : {}) } as RequestInit),
    });
    return { issuer: meta.issuer.replace('{tenantid}', tid), jwks, at: Date.now() };
  }
}
