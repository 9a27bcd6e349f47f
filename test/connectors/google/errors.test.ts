import net from 'node:net';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { useNock } from '../helpers.ts';
import { googleDirectorySource } from '../../../connectors/google/directory.ts';
import { DEFAULT_RATE_LIMIT_BACKOFF_MS } from '../../../connectors/google/errors.ts';
import { AccessLostError, ConnectorError, InvalidResponseError, RateLimitedError, TransientError } from '../../../connectors/types.ts';
import { ADMIN_ORIGIN, TOKEN_ORIGIN, USERS_PATH, apiError, fixture, mockTokenError, mockTokenExchange, serviceAccountKey, silentLogger } from './helpers.ts';

function source(config: Record<string, unknown> = {}) {
  const def = googleDirectorySource;
  return def.create({ config: def.configSchema.parse(config), credentials: def.credentialsSchema.parse(serviceAccountKey()), logger: silentLogger() });
}

/** The error checkAccess (one users.list call) ends with. */
async function checkAccessError(config: Record<string, unknown> = {}): Promise<ConnectorError> {
  const err: unknown = await source(config)
    .checkAccess()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  if (!(err instanceof ConnectorError)) throw new Error(`expected a ConnectorError, got ${String(err)}`);
  return err;
}

function usersList() {
  return nock(ADMIN_ORIGIN).get(USERS_PATH).query(true);
}

useNock();

describe('Google error mapping (directory)', () => {
  describe('token endpoint errors become access_lost, keeping the provider message', () => {
    it.each([
      [
        'unauthorized_client',
        'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
        401,
      ],
      ['invalid_grant', 'Invalid JWT Signature.', 400],
      ['invalid_grant', 'Invalid email or User ID', 400],
      ['access_denied', 'Requested client not authorized.', 400],
      ['admin_policy_enforced', 'Access restricted by the admin policy.', 400],
      ['disabled_client', 'The OAuth client was disabled.', 401],
      ['deleted_client', 'The OAuth client was deleted.', 401],
    ])('%s (%s)', async (code, description, status) => {
      const token = mockTokenError(code, description, status);
      const err = await checkAccessError();
      token.done();
      expect(err).toBeInstanceOf(AccessLostError);
      expect(err).toMatchObject({ code: 'access_lost', providerCode: code, status });
      expect(err.message).toContain(`${code}: ${description}`);
    });
  });

  it('HTTP 401 becomes access_lost', async () => {
    const token = mockTokenExchange();
    const api = usersList().reply(401, apiError(401, 'Request had invalid authentication credentials.', 'authError', 'UNAUTHENTICATED'));
    const err = await checkAccessError();
    token.done();
    api.done();
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ code: 'access_lost', status: 401, providerCode: 'authError' });
    expect(err.message).toContain('Request had invalid authentication credentials.');
  });

  it('403 from a subject that is not an admin becomes access_lost with Google’s message', async () => {
    const token = mockTokenExchange();
    const api = usersList().reply(403, apiError(403, 'Not Authorized to access this resource/api', 'forbidden'));
    const err = await checkAccessError();
    token.done();
    api.done();
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ code: 'access_lost', status: 403, providerCode: 'forbidden' });
    expect(err.message).toBe('users.list: Not Authorized to access this resource/api');
  });

  it.each(['userRateLimitExceeded', 'rateLimitExceeded', 'quotaExceeded'])('403 %s becomes rate_limited with the default backoff', async (reason) => {
    const token = mockTokenExchange();
    const api = usersList().reply(403, apiError(403, 'Quota exceeded for quota metric', reason, 'PERMISSION_DENIED', 'usageLimits'));
    const err = await checkAccessError();
    token.done();
    api.done();
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 403, providerCode: reason, retryAfterMs: DEFAULT_RATE_LIMIT_BACKOFF_MS });
  });

  it('429 becomes rate_limited honouring Retry-After', async () => {
    const token = mockTokenExchange();
    const api = usersList().reply(429, apiError(429, 'Rate Limit Exceeded', 'rateLimitExceeded', 'RESOURCE_EXHAUSTED'), { 'Retry-After': '7' });
    const err = await checkAccessError();
    token.done();
    api.done();
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, providerCode: 'rateLimitExceeded', retryAfterMs: 7000 });
  });

  it.each([500, 502, 503])('%i becomes transient', async (status) => {
    const token = mockTokenExchange();
    const api = usersList().reply(status, apiError(status, 'Backend Error', 'backendError'));
    const err = await checkAccessError();
    token.done();
    api.done();
    expect(err).toBeInstanceOf(TransientError);
    expect(err).toMatchObject({ code: 'transient', status, providerCode: 'backendError' });
  });

  it('a network error (connection reset) becomes transient', async () => {
    // nock cannot fail a fetch at the socket level, so a local server resets the connection.
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    nock.enableNetConnect('127.0.0.1');
    try {
      const token = mockTokenExchange();
      const { port } = server.address() as net.AddressInfo;
      const err = await checkAccessError({ base_url: `http://127.0.0.1:${port}` });
      token.done();
      expect(err).toBeInstanceOf(TransientError);
      expect(err).toMatchObject({ code: 'transient', status: undefined });
      expect(err.message).toMatch(/^users\.list: /);
    } finally {
      nock.disableNetConnect();
      server.close();
    }
  });

  it('a timeout becomes transient', async () => {
    const token = mockTokenExchange();
    const api = usersList().delay(3000).reply(200, { users: [] });
    const err = await checkAccessError({ request_timeout_ms: 500 });
    token.done();
    api.done();
    expect(err).toBeInstanceOf(TransientError);
    expect(err.code).toBe('transient');
  });

  it('a 5xx from the token endpoint becomes transient', async () => {
    const token = nock(TOKEN_ORIGIN).post('/token').reply(503, 'Service Unavailable');
    const err = await checkAccessError();
    token.done();
    expect(err).toBeInstanceOf(TransientError);
    expect(err).toMatchObject({ code: 'transient', status: 503 });
  });

  it('a users page that does not parse becomes invalid_response', async () => {
    const token = mockTokenExchange();
    const page = fixture<{ users: Record<string, unknown>[] }>('users.list.page3.json');
    delete page.users[1]!.id;
    const api = nock(ADMIN_ORIGIN).get('/admin/directory/v1/groups').query(true).reply(200, { groups: [] }).get(USERS_PATH).query(true).reply(200, page);
    const err: unknown = await source()
      .fetchUsersPage({})
      .catch((e: unknown) => e);
    token.done();
    api.done();
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ code: 'invalid_response' });
    expect((err as InvalidResponseError).issues[0]?.path).toEqual(['users', 1, 'id']);
  });

  describe('the SDK does not retry: the engine owns retries', () => {
    it('a 503 from users.list is called once', async () => {
      let calls = 0;
      const token = mockTokenExchange();
      const api = usersList()
        .times(4)
        .reply(() => {
          calls += 1;
          return [503, apiError(503, 'Backend Error', 'backendError')];
        });
      const err = await checkAccessError();
      token.done();
      expect(err).toBeInstanceOf(TransientError);
      expect(calls).toBe(1);
      expect(api.pendingMocks()).toHaveLength(1); // three of the four answers left unused
    });

    it('a 500 from the token endpoint is requested once', async () => {
      let calls = 0;
      const token = nock(TOKEN_ORIGIN)
        .post('/token')
        .times(4)
        .reply(() => {
          calls += 1;
          return [500, { error: 'internal_failure' }];
        });
      const err = await checkAccessError();
      expect(err).toBeInstanceOf(TransientError);
      expect(calls).toBe(1);
      expect(token.pendingMocks()).toHaveLength(1);
    });

    it('a 429 is not retried either', async () => {
      let calls = 0;
      const token = mockTokenExchange();
      usersList()
        .times(4)
        .reply(() => {
          calls += 1;
          return [429, apiError(429, 'Rate Limit Exceeded', 'rateLimitExceeded')];
        });
      const err = await checkAccessError();
      token.done();
      expect(err).toBeInstanceOf(RateLimitedError);
      expect(calls).toBe(1);
    });
  });
});
