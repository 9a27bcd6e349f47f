import { inspect } from 'node:util';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { captureLogger, useNock } from '../helpers.ts';
import { slackDelivery } from '../../../connectors/slack/delivery.ts';
import { slackDirectorySource } from '../../../connectors/slack/directory.ts';
import { config, CREDENTIALS, fixture, mockProfiles, mockUsersList, slack, slackError } from './helpers.ts';

useNock();

describe('secrets', () => {
  it('never writes the bot token into logs or error messages, even at trace level', async () => {
    const { logger, lines } = captureLogger();
    const errors: unknown[] = [];
    const ctx = { config: config(), credentials: CREDENTIALS, logger };

    mockProfiles(mockUsersList(slack()));
    const src = slackDirectorySource.create(ctx);
    for (let token: string | undefined, n = 0; n < 3; n++) token = (await src.fetchUsersPage({ pageToken: token })).nextPageToken ?? undefined;

    slack().post('/api/users.list').reply(200, slackError('invalid_auth'));
    errors.push(await src.fetchUsersPage({}).catch((e: unknown) => e));
    slack()
      .post('/api/users.lookupByEmail')
      .reply(200, fixture('users.lookupByEmail.json'))
      .post('/api/conversations.open')
      .reply(200, slackError('token_revoked'));
    errors.push(
      await slackDelivery
        .create(ctx)
        .install({ email: 'alice@acme.test', aliases: [] }, { html: '<p>x</p>', text: 'x', hash: 'h', kind: 'primary' })
        .catch((e: unknown) => e),
    );
    // Unreachable Slack: the request error carries the request, not the token.
    nock.cleanAll();
    errors.push(await src.fetchUsersPage({}).catch((e: unknown) => e));

    expect(errors.map((e) => (e as { code: string }).code)).toEqual(['access_lost', 'access_lost', 'transient']);
    expect(lines.some((l) => l.includes('users.list'))).toBe(true);
    const text = [...lines, ...errors.map((e) => `${(e as Error).message}\n${inspect(e, { depth: 8 })}\n${JSON.stringify(e)}`)].join('\n');
    expect(text).not.toContain(CREDENTIALS.bot_token);
  });
});
