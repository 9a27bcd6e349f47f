import { inspect } from 'node:util';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { microsoftDirectorySource } from '../../../connectors/microsoft/directory.ts';
import { graphError } from '../../../connectors/microsoft/graph.ts';
import { AccessLostError, TransientError } from '../../../connectors/types.ts';
import { aadstsError, ACCESS_TOKEN, config, CREDENTIALS, fixture, GRAPH, graphErrorBody, mockGroups, tokenScope } from './helpers.ts';

useNock();

function source(logger = captureLogger().logger) {
  return microsoftDirectorySource.create({ config: config(), credentials: CREDENTIALS, logger });
}

describe('Microsoft token endpoint errors', () => {
  it.each([
    ['unauthorized_client', 400, 700016, "Application with identifier '6731de76' was not found in the directory 'Contoso'."],
    [
      'invalid_client',
      401,
      7000215,
      'Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.',
    ],
    ['invalid_client', 401, 7000222, "The provided client secret keys for app '6731de76' are expired."],
    ['invalid_grant', 400, 65001, "The user or administrator has not consented to use the application with ID '6731de76'."],
    ['unauthorized_client', 400, 7000112, "Application '6731de76' is disabled."],
  ])('maps %s (HTTP %i, AADSTS%i) to AccessLostError with the provider message', async (error, status, code, description) => {
    const token = tokenScope(undefined, [status, aadstsError(error, code, description)]);
    const err = await source()
      .listGroups()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AccessLostError);
    expect(err).toMatchObject({ code: 'access_lost', providerCode: `AADSTS${code}` });
    expect((err as Error).message).toContain(`AADSTS${code}: ${description}`);
    expect((err as Error).message).not.toContain('Trace ID');
    token.done();
  });

  it('maps a token endpoint outage to TransientError', async () => {
    const token = tokenScope(undefined, [
      503,
      { error: 'temporarily_unavailable', error_description: 'AADSTS90033: A transient error has occurred. Please try again.' },
    ]);
    const err = await source()
      .listGroups()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect(err).toMatchObject({ code: 'transient' });
    token.done();
  });

  it('maps an unreachable token endpoint to TransientError', async () => {
    const err = await source()
      .listGroups()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
  });

  it('maps every Graph status through one function', () => {
    expect(graphError({ kind: 'http', status: 403, code: 'ErrorAccessDenied' }, 'directory')).toMatchObject({ code: 'access_lost' });
    expect(graphError({ kind: 'http', status: 403, code: 'ErrorAccessDenied' }, 'mailbox')).toMatchObject({ code: 'forbidden' });
    expect(graphError({ kind: 'http', status: 429, retryAfter: 'Wed, 21 Oct 2099 07:28:00 GMT' }, 'directory')).toMatchObject({ code: 'rate_limited' });
    expect(graphError({ kind: 'http', status: 429 }, 'directory')).toMatchObject({ code: 'rate_limited', retryAfterMs: 10_000 });
    expect(graphError({ kind: 'http', status: 504 }, 'directory')).toMatchObject({ code: 'transient', status: 504 });
  });
});

describe('secrets', () => {
  it('never writes the client secret or the access token into logs or error messages', async () => {
    const { logger, lines } = captureLogger();
    const errors: unknown[] = [];

    // A working run...
    tokenScope();
    mockGroups(nock(GRAPH))
      .get('/v1.0/users/delta')
      .query(true)
      .reply(200, fixture('users.delta.latest.json'))
      .get('/v1.0/users')
      .query(true)
      .reply(200, fixture('users.page3.json'));
    const src = source(logger);
    await src.listGroups();
    await src.fetchUsersPage({});
    // ...then the token stops working...
    nock(GRAPH).get('/v1.0/users').query(true).reply(401, graphErrorBody('InvalidAuthenticationToken', 'Lifetime validation failed, the token is expired.'));
    errors.push(await src.checkAccess().catch((e: unknown) => e));
    // ...and the secret is rejected.
    tokenScope(undefined, [401, aadstsError('invalid_client', 7000215, 'Invalid client secret provided.')]);
    errors.push(
      await source(logger)
        .listGroups()
        .catch((e: unknown) => e),
    );

    expect(errors.map((e) => (e as Error).name)).toEqual(['AccessLostError', 'AccessLostError']);
    const text = [...lines, ...errors.map((e) => `${(e as Error).message}\n${inspect(e, { depth: 6 })}\n${JSON.stringify(e)}`)].join('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(text).not.toContain(CREDENTIALS.client_secret);
    expect(text).not.toContain(ACCESS_TOKEN);
  });
});
