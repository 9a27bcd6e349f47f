/**
 * Google credentials and the auth client built from them.
 *
 * Two kinds of credentials:
 * - `service_account`: the JSON key of a service account with domain-wide delegation, plus
 *   `subject`, the admin (directory, photos) the service account acts as. The Gmail installer
 *   acts as each mailbox user instead. Token: a signed JWT exchanged at the token endpoint
 *   (google-auth-library `JWT`).
 * - `authorized_user`: an OAuth client (client_id, client_secret) with an admin's refresh token,
 *   the shape of gcloud's `authorized_user` files. Directory and photos only.
 *
 * Token URL override (`token_url` in the config):
 * - OAuth client: the supported `endpoints.oauth2TokenUrl` option of `OAuth2Client`.
 * - Service account: `JWT` fetches its token through its own gaxios transporter, but the URL
 *   (https://oauth2.googleapis.com/token) is fixed inside the library. A request interceptor on
 *   that transporter (a public gaxios API) sends the request to `token_url` instead. The JWT's
 *   `aud` claim stays the Google URL, which is what Google's own endpoint expects; a sandbox
 *   token endpoint must accept it.
 *
 * Retries: the same interceptor turns gaxios retries off for every request of the client (API
 * calls and token requests alike; the library asks for token retries on POST by default). The
 * sync engine and the install jobs own retry and backoff, driven by the ConnectorError codes.
 *
 * Cancelling: given `signal` (the connector context's), the same interceptor adds it to every
 * request beside gaxios's own timeout, so a stopping worker does not wait for a provider that
 * does not answer.
 *
 * Secrets: the key, the client email, the client secret and the refresh token are never logged
 * and never put into an error; `secretRedactor` scrubs any provider text that might echo them.
 */
import { createPrivateKey } from 'node:crypto';
import { JWT, OAuth2Client, type AuthClient } from 'google-auth-library';
import { z } from 'zod';

/** Google's token endpoint, as google-auth-library has it built in. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

function isPrivateKey(pem: string): boolean {
  try {
    createPrivateKey(pem);
    return true;
  } catch {
    return false;
  }
}

const serviceAccountFields = {
  type: z.literal('service_account'),
  client_email: z.email(),
  private_key: z.string().refine(isPrivateKey, { message: 'private_key is not a PEM private key' }),
  private_key_id: z.string().optional(),
  project_id: z.string().optional(),
  client_id: z.string().optional(),
};

/** A service account JSON key plus the admin it acts as. */
export const serviceAccountCredentialsSchema = z.object({
  ...serviceAccountFields,
  /** The admin the service account acts as (domain-wide delegation). */
  subject: z.email(),
});

/** An OAuth client with an admin's refresh token (gcloud `authorized_user` shape). */
export const oauthClientCredentialsSchema = z.object({
  type: z.literal('authorized_user'),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  refresh_token: z.string().min(1),
});

/** Directory and photo credentials: either kind, told apart by `type`. */
export const googleCredentialsSchema = z.discriminatedUnion('type', [serviceAccountCredentialsSchema, oauthClientCredentialsSchema]);
export type GoogleCredentials = z.infer<typeof googleCredentialsSchema>;

/**
 * Gmail credentials: a service account only, since writing another user's send-as settings needs
 * domain-wide delegation. `subject` is optional here: each install acts as the mailbox user.
 */
export const gmailCredentialsSchema = z.object({ ...serviceAccountFields, subject: z.email().optional() });
export type GmailCredentials = z.infer<typeof gmailCredentialsSchema>;

export interface AuthOptions {
  /** Token endpoint override; Google's when absent. */
  tokenUrl?: string | undefined;
  /** Per-request timeout for token requests, in ms. */
  timeoutMs: number;
  /** Cancels every request of the client (API calls and token requests) once aborted. */
  signal?: AbortSignal | undefined;
}

type RequestInterceptor = Parameters<AuthClient['transporter']['interceptors']['request']['add']>[0];

/**
 * Sends token requests to `tokenUrl`, turns gaxios retries off, and adds `signal` to the request's
 * own (gaxios has already set its timeout signal when interceptors run: both apply).
 */
function transportPolicy(tokenUrl: string | undefined, signal: AbortSignal | undefined): RequestInterceptor {
  return {
    resolved: async (opts) => {
      opts.retry = false;
      opts.retryConfig = { ...opts.retryConfig, retry: 0, noResponseRetries: 0 };
      if (tokenUrl && String(opts.url) === GOOGLE_TOKEN_URL) opts.url = new URL(tokenUrl);
      if (signal) opts.signal = opts.signal ? AbortSignal.any([opts.signal as AbortSignal, signal]) : signal;
      return opts;
    },
  };
}

/**
 * A service-account client acting as `subject` (domain-wide delegation), or as the service account
 * itself without one (its token proves the key, not the delegation).
 */
export function serviceAccountClient(
  creds: Pick<z.infer<typeof serviceAccountCredentialsSchema>, 'client_email' | 'private_key' | 'private_key_id'>,
  subject: string | undefined,
  scopes: readonly string[],
  opts: AuthOptions,
): JWT {
  const client = new JWT({
    email: creds.client_email,
    key: creds.private_key,
    keyId: creds.private_key_id,
    scopes: [...scopes],
    ...(subject ? { subject } : {}),
    transporterOptions: { timeout: opts.timeoutMs },
  });
  client.transporter.interceptors.request.add(transportPolicy(opts.tokenUrl, opts.signal));
  return client;
}

/** An OAuth client that refreshes its access token from the refresh token. */
export function oauthClient(creds: z.infer<typeof oauthClientCredentialsSchema>, opts: AuthOptions): OAuth2Client {
  const client = new OAuth2Client({
    clientId: creds.client_id,
    clientSecret: creds.client_secret,
    ...(opts.tokenUrl ? { endpoints: { oauth2TokenUrl: opts.tokenUrl } } : {}),
    transporterOptions: { timeout: opts.timeoutMs },
  });
  client.setCredentials({ refresh_token: creds.refresh_token });
  client.transporter.interceptors.request.add(transportPolicy(undefined, opts.signal));
  return client;
}

/** The client for directory and photo calls: as the admin subject, or with the admin's refresh token. */
export function adminAuthClient(creds: GoogleCredentials, scopes: readonly string[], opts: AuthOptions): OAuth2Client {
  return creds.type === 'service_account' ? serviceAccountClient(creds, creds.subject, scopes, opts) : oauthClient(creds, opts);
}

/** The secret strings of a set of credentials, for scrubbing provider text. */
export function credentialSecrets(
  creds: Partial<Record<'client_email' | 'private_key' | 'client_id' | 'client_secret' | 'refresh_token' | 'private_key_id', string | undefined>>,
): string[] {
  const out: string[] = [];
  for (const v of [creds.private_key, creds.client_email, creds.client_secret, creds.refresh_token, creds.private_key_id]) {
    if (v && v.length >= 4) out.push(v);
  }
  // The key body, whole and line by line, in case a text echoes it without the PEM armour.
  const lines = (creds.private_key ?? '')
    .replace(/-----[^-]+-----/g, '')
    .split(/\s+/)
    .filter((l) => l.length >= 16);
  if (lines.length > 1) out.push(lines.join(''));
  out.push(...lines);
  return out;
}

export type Redactor = (text: string) => string;

/** Replaces every occurrence of the credential secrets in a text with `[redacted]`. */
export function secretRedactor(secrets: readonly string[]): Redactor {
  const list = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of list) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return out;
  };
}
