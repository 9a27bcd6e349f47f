/**
 * Shared pieces of the Google connector tests: a throwaway service-account key, recorded
 * fixtures, the token endpoint mock, and a silent logger.
 */
import { generateKeyPairSync } from 'node:crypto';
import nock from 'nock';
import { pino, type Logger } from 'pino';
import { fixtureReader } from '../helpers.ts';

export const ADMIN_ORIGIN = 'https://admin.googleapis.com';
export const GMAIL_ORIGIN = 'https://gmail.googleapis.com';
export const TOKEN_ORIGIN = 'https://oauth2.googleapis.com';
export const USERS_PATH = '/admin/directory/v1/users';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
/** A fresh RSA key per test run, in the PKCS#8 PEM form Google's JSON keys use. */
export const PRIVATE_KEY = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
export const CLIENT_EMAIL = 'sigsync-sync@acme-signatures-4711.iam.gserviceaccount.com';
export const ADMIN_SUBJECT = 'it-admin@acme.example';

/** A service-account JSON key, as the Cloud console downloads it, plus the admin subject. */
export function serviceAccountKey(extra: Record<string, unknown> = {}) {
  return {
    type: 'service_account',
    project_id: 'acme-signatures-4711',
    private_key_id: '4f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d',
    private_key: PRIVATE_KEY,
    client_email: CLIENT_EMAIL,
    client_id: '104857392018475629301',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: 'https://oauth2.googleapis.com/token',
    auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
    client_x509_cert_url: 'https://www.googleapis.com/robot/v1/metadata/x509/sigsync-sync%40acme-signatures-4711.iam.gserviceaccount.com',
    universe_domain: 'googleapis.com',
    subject: ADMIN_SUBJECT,
    ...extra,
  };
}

/** A recorded provider answer from fixtures/google. */
export const fixture = fixtureReader('google');

/** A form body as nock hands it to a matcher: a string, or already parsed into an object. */
export function formBody(body: unknown): URLSearchParams {
  if (typeof body === 'string') return new URLSearchParams(body);
  if (body && typeof body === 'object') return new URLSearchParams(body as Record<string, string>);
  return new URLSearchParams();
}

/** Claims of the JWT assertion a service account posts to the token endpoint. */
export function assertionClaims(body: unknown): Record<string, unknown> {
  const assertion = formBody(body).get('assertion') ?? '';
  const payload = assertion.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

export const TOKEN_RESPONSE = { access_token: 'ya29.test-access-token', expires_in: 3599, token_type: 'Bearer' };

/** The token endpoint answering one JWT-bearer exchange; `claims` receives the assertion's claims. */
export function mockTokenExchange(claims?: (c: Record<string, unknown>) => void, origin = TOKEN_ORIGIN, path = '/token') {
  return nock(origin)
    .post(path, (body: unknown) => {
      const params = formBody(body);
      if (params.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return false;
      claims?.(assertionClaims(body));
      return true;
    })
    .reply(200, TOKEN_RESPONSE);
}

/** The token endpoint refusing the exchange with an OAuth error. */
export function mockTokenError(error: string, description: string, status = 400) {
  return nock(TOKEN_ORIGIN).post('/token').reply(status, { error, error_description: description });
}

/** A Google API error body. */
export function apiError(code: number, message: string, reason: string, status?: string, domain = 'global') {
  return { error: { code, message, errors: [{ message, domain, reason }], ...(status ? { status } : {}) } };
}

export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/** Counts requests nock could not match (i.e. any request no test expected). */
export function countUnmatched(): { readonly count: number; stop(): void } {
  let count = 0;
  const onNoMatch = () => {
    count += 1;
  };
  nock.emitter.on('no match', onNoMatch);
  return {
    get count() {
      return count;
    },
    stop: () => nock.emitter.removeListener('no match', onNoMatch),
  };
}
