/**
 * The emulated tenant's side of the Outlook add-in's single sign-on: an RSA signing key made at
 * start, published at `/{tenant}/discovery/v2.0/keys` (the `jwks_uri` of the tenant's OpenID
 * configuration), and user access tokens signed with it, shaped as Entra ID v2.0 tokens for the
 * add-in's app (`iss` {emulator}/{tenant}/v2.0, `aud`, `tid`, `oid`, `preferred_username`, `scp`).
 * This is what `OfficeRuntime.auth.getAccessToken` returns in a real tenant.
 */
import crypto from 'node:crypto';
import { exportJWK, SignJWT, type JWK } from 'jose';
import type { Route } from './http.ts';

export interface UserTokenClaims {
  /** The add-in app's client id or Application ID URI. */
  audience: string;
  oid: string;
  preferredUsername: string;
  /** Default: the emulated tenant. */
  tenantId?: string;
  /** Seconds from now (negative: already expired). Default 3600. */
  expiresIn?: number;
  /**
   * An app-only token, as the client credentials flow makes one: `roles` and `idtyp: app`, no `scp`
   * (https://learn.microsoft.com/entra/identity-platform/access-token-claims-reference). Default false.
   */
  appOnly?: boolean;
  /** The delegated scopes (`scp`), space-separated. Default `access_as_user`. */
  scope?: string;
}

export interface UserTokenIssuer {
  routes: Route[];
  issue(claims: UserTokenClaims): Promise<string>;
}

export function userTokenIssuer(tenantId: string, base: () => string): UserTokenIssuer {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomBytes(8).toString('hex');
  let jwk: Promise<JWK> | undefined;
  const publicJwk = () => (jwk ??= exportJWK(publicKey).then((k) => ({ ...k, kid, use: 'sig', alg: 'RS256' })));
  return {
    routes: [
      {
        method: 'GET',
        pattern: /^\/([^/]+)\/discovery\/v2\.0\/keys$/,
        name: 'jwks',
        control: true,
        handler: async (_c, m) =>
          decodeURIComponent(m[1]!) === tenantId ? { status: 200, body: { keys: [await publicJwk()] } } : { status: 400, body: { error: 'invalid_tenant' } },
      },
    ],
    async issue(c) {
      const tid = c.tenantId ?? tenantId;
      const now = Math.floor(Date.now() / 1000);
      const exp = now + (c.expiresIn ?? 3600);
      const who = c.appOnly
        ? { roles: ['MailboxSettings.Read'], idtyp: 'app', azp: c.audience }
        : { preferred_username: c.preferredUsername, name: c.preferredUsername, scp: c.scope ?? 'access_as_user' };
      return new SignJWT({ tid, oid: c.oid, ...who, ver: '2.0' })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
        .setIssuer(`${base()}/${tid}/v2.0`)
        .setAudience(c.audience)
        .setIssuedAt(Math.min(now, exp - 60))
        .setNotBefore(Math.min(now, exp - 60))
        .setExpirationTime(exp)
        .sign(privateKey);
    },
  };
}
