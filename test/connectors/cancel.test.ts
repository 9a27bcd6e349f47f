/**
 * A connector built with a signal (ConnectorContext.signal, the sync job's: aborted when its worker
 * stops) cancels its provider requests in flight once it is aborted, token requests included,
 * instead of holding the worker until the request's own timeout (here 5 minutes).
 */
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { useNock } from './helpers.ts';
import { googleDirectorySource } from '../../connectors/google/directory.ts';
import { microsoftDirectorySource } from '../../connectors/microsoft/directory.ts';
import { slackDirectorySource } from '../../connectors/slack/directory.ts';
import { TransientError, type DirectorySource } from '../../connectors/types.ts';
import { ADMIN_ORIGIN, TOKEN_ORIGIN, USERS_PATH, mockTokenExchange, serviceAccountKey, silentLogger } from './google/helpers.ts';
import { CREDENTIALS as MS_CREDENTIALS, GRAPH, config as msConfig, tokenScope } from './microsoft/helpers.ts';
import { CREDENTIALS as SLACK_CREDENTIALS, config as slackConfig, slack } from './slack/helpers.ts';

/** The requests' own timeout: longer than any test may take, so only the abort can end a request. */
const HELD_MS = 300_000;

/** A provider that never answers (a nock reply whose answer never comes). */
const never = (): Promise<[number, string]> => new Promise(() => {});

useNock();

/** Calls checkAccess, aborts once `held` has received its request, and answers how the call ended. */
async function abortedWhileHeld(source: DirectorySource, held: nock.Scope, stop: AbortController): Promise<unknown> {
  const arrived = new Promise<void>((resolve) => held.once('request', () => resolve()));
  const call = source.checkAccess().then(
    () => 'answered',
    (err: unknown) => err,
  );
  await arrived;
  stop.abort();
  return call;
}

describe('a connector with a signal cancels its requests once it is aborted', { timeout: 60_000 }, () => {
  const google = (signal: AbortSignal) =>
    googleDirectorySource.create({
      config: googleDirectorySource.configSchema.parse({ request_timeout_ms: HELD_MS }),
      credentials: googleDirectorySource.credentialsSchema.parse(serviceAccountKey()),
      logger: silentLogger(),
      signal,
    });

  it('Google: the Admin SDK call', async () => {
    const stop = new AbortController();
    mockTokenExchange();
    const held = nock(ADMIN_ORIGIN).get(USERS_PATH).query(true).reply(never);
    const err = await abortedWhileHeld(google(stop.signal), held, stop);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toMatch(/^users\.list: AbortError: /);
  });

  it('Google: the token request', async () => {
    const stop = new AbortController();
    const held = nock(TOKEN_ORIGIN).post('/token').reply(never);
    const err = await abortedWhileHeld(google(stop.signal), held, stop);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toMatch(/AbortError/);
  });

  it('Microsoft Graph: the Graph call', async () => {
    const stop = new AbortController();
    tokenScope();
    const held = nock(GRAPH).get('/v1.0/users').query(true).reply(never);
    const source = microsoftDirectorySource.create({ config: msConfig(), credentials: MS_CREDENTIALS, logger: silentLogger(), signal: stop.signal });
    const err = await abortedWhileHeld(source, held, stop);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toMatch(/^Microsoft Graph request failed: .*abort/i);
  });

  it('Slack: the Web API call', async () => {
    const stop = new AbortController();
    const held = slack().post('/api/auth.test').reply(never);
    const source = slackDirectorySource.create({ config: slackConfig(), credentials: SLACK_CREDENTIALS, logger: silentLogger(), signal: stop.signal });
    const err = await abortedWhileHeld(source, held, stop);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toMatch(/^Slack request auth\.test failed: .*abort/i);
  });
});
