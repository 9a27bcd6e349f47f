import { inspect } from 'node:util';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { googleDirectorySource } from '../../../connectors/google/directory.ts';
import { gmailInstaller } from '../../../connectors/google/gmail.ts';
import { ConnectorError } from '../../../connectors/types.ts';
import {
  ADMIN_ORIGIN,
  CLIENT_EMAIL,
  GMAIL_ORIGIN,
  PRIVATE_KEY,
  TOKEN_ORIGIN,
  TOKEN_RESPONSE,
  USERS_PATH,
  apiError,
  fixture,
  mockTokenError,
  mockTokenExchange,
  serviceAccountKey,
} from './helpers.ts';

const CLIENT_SECRET = 'GOCSPX-s3cr3t-Vq7ZkLm2';
const REFRESH_TOKEN = '1//0gRefreshTokenThatMustNeverLeak';
/** A line from the middle of the PEM body: a fragment of the key that must never show up either. */
const KEY_FRAGMENT = PRIVATE_KEY.split('\n')[5]!;

function everythingAbout(err: unknown): string {
  return [String(err), JSON.stringify(err), inspect(err, { depth: Infinity, showHidden: true })].join('\n');
}

function expectNoSecrets(text: string) {
  expect(text).not.toContain(CLIENT_EMAIL);
  expect(text).not.toContain(KEY_FRAGMENT);
  expect(text).not.toContain('BEGIN PRIVATE KEY');
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toContain(REFRESH_TOKEN);
  expect(text).not.toContain(TOKEN_RESPONSE.access_token);
}

useNock();

describe('Google credentials stay out of logs and errors', () => {
  it('the private key and client email never appear in logs or error messages', async () => {
    const { logger, lines } = captureLogger({ redact: false }); // trace level, no redaction: only what the connector writes
    const errors: unknown[] = [];
    const capture = async (p: Promise<unknown>) => {
      await p.then(
        () => undefined,
        (e: unknown) => {
          errors.push(e);
          logger.error({ err: e }, 'google call failed'); // as the engine would log it
        },
      );
    };

    const dirDef = googleDirectorySource;
    const directory = () => dirDef.create({ config: dirDef.configSchema.parse({}), credentials: dirDef.credentialsSchema.parse(serviceAccountKey()), logger });

    // A successful listing, logged at every level.
    const token = mockTokenExchange();
    const api = nock(ADMIN_ORIGIN)
      .get('/admin/directory/v1/groups')
      .query(true)
      .reply(200, { groups: [] })
      .get(USERS_PATH)
      .query(true)
      .reply(200, fixture('users.list.page3.json'));
    await directory().fetchUsersPage({});
    token.done();
    api.done();

    // Token errors whose text echoes the client email and the key.
    mockTokenError('unauthorized_client', `Client ${CLIENT_EMAIL} is unauthorized to retrieve access tokens using this method.`, 401);
    await capture(directory().checkAccess());
    mockTokenError('invalid_grant', `Invalid JWT Signature for key ${KEY_FRAGMENT}.`);
    await capture(directory().checkAccess());

    // An API error echoing the client email.
    mockTokenExchange();
    nock(ADMIN_ORIGIN)
      .get(USERS_PATH)
      .query(true)
      .reply(403, apiError(403, `Not Authorized to access this resource/api (caller ${CLIENT_EMAIL})`, 'forbidden'));
    await capture(directory().checkAccess());

    // A token endpoint that answers garbage.
    nock(TOKEN_ORIGIN).post('/token').reply(502, `<html>bad gateway for ${CLIENT_EMAIL}</html>`);
    await capture(directory().checkAccess());

    // Gmail: a mailbox failure and a rate limit.
    const gmailDef = gmailInstaller;
    const gmail = gmailDef.create({ config: gmailDef.configSchema.parse({}), credentials: gmailDef.credentialsSchema.parse(serviceAccountKey()), logger });
    mockTokenExchange();
    nock(GMAIL_ORIGIN)
      .patch(/\/settings\/sendAs\/[^/]+$/)
      .reply(403, apiError(403, `Delegation denied for ${CLIENT_EMAIL}`, 'forbidden'))
      .patch(/\/settings\/sendAs\/[^/]+$/)
      .reply(429, apiError(429, 'Too many requests', 'rateLimitExceeded'));
    const sig = { html: '<p>hi</p>', text: 'hi', hash: 'h', kind: 'primary' as const };
    await capture(gmail.install({ email: 'alice.martin@acme.example', aliases: [] }, sig));
    await capture(gmail.install({ email: 'alice.martin@acme.example', aliases: [] }, sig));

    // An OAuth client whose refresh token was revoked.
    const oauth = dirDef.create({
      config: dirDef.configSchema.parse({}),
      credentials: dirDef.credentialsSchema.parse({
        type: 'authorized_user',
        client_id: 'cid.apps.googleusercontent.com',
        client_secret: CLIENT_SECRET,
        refresh_token: REFRESH_TOKEN,
      }),
      logger,
    });
    nock(TOKEN_ORIGIN)
      .post('/token')
      .reply(400, { error: 'invalid_grant', error_description: `Token ${REFRESH_TOKEN} has been expired or revoked.` });
    await capture(oauth.checkAccess());

    expect(errors).toHaveLength(7);
    for (const err of errors) {
      expect(err).toBeInstanceOf(ConnectorError);
      expectNoSecrets(everythingAbout(err));
    }
    // The provider's words are kept, with the secret scrubbed.
    expect((errors[0] as Error).message).toBe(
      'users.list: unauthorized_client: Client [redacted] is unauthorized to retrieve access tokens using this method.',
    );
    expect((errors[6] as Error).message).toBe('users.list: invalid_grant: Token [redacted] has been expired or revoked.');

    const log = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(8); // debug lines from the listing plus one per failure
    expectNoSecrets(log);
    expect(nock.pendingMocks()).toEqual([]);
  });
});
