/**
 * Shared test setup for the Slack connectors: fixtures and Web API mocks.
 */
import nock from 'nock';
import { fixtureReader } from '../helpers.ts';
import { slackConfigSchema, type SlackCredentials } from '../../../connectors/slack/schemas.ts';

export const SLACK = 'https://slack.com';
export const CREDENTIALS: SlackCredentials = { bot_token: 'xoxb-1111-2222-SECRETbotTOKENvalue' };
/** What Slack sends in X-OAuth-Scopes for a correctly installed app. */
export const SCOPES = { 'x-oauth-scopes': 'users:read,users:read.email,users.profile:read,im:write,chat:write' };

export const fixture = fixtureReader('slack');

export function config(extra: Record<string, unknown> = {}) {
  return slackConfigSchema.parse({ profile_requests_per_minute: 6_000, ...extra });
}

/** Slack's Web API: every method is a POST to /api/<method>, authorised by the bot token. */
export function slack(host = SLACK): nock.Scope {
  return nock(host).matchHeader('authorization', `Bearer ${CREDENTIALS.bot_token}`);
}

/** A form body field of a Web API call. */
export function field(name: string, value: string | undefined) {
  return (body: Record<string, string>) => body[name] === value;
}

export function slackError(error: string, extra: Record<string, unknown> = {}) {
  return { ok: false, error, ...extra };
}

/** users.list pages 1-3 of the fixtures. */
export function mockUsersList(scope: nock.Scope): nock.Scope {
  return scope
    .post('/api/users.list', (b: Record<string, string>) => b.limit === '200' && b.cursor === undefined)
    .reply(200, fixture('users.list.page1.json'), SCOPES)
    .post('/api/users.list', field('cursor', 'dXNlcjpVMDJSVEw='))
    .reply(200, fixture('users.list.page2.json'), SCOPES)
    .post('/api/users.list', field('cursor', 'dXNlcjpVMDNEVVBF'))
    .reply(200, fixture('users.list.page3.json'), SCOPES);
}

/** team.profile.get and one users.profile.get per member that has an email. */
export function mockProfiles(scope: nock.Scope): nock.Scope {
  scope.post('/api/team.profile.get').reply(200, fixture('team.profile.get.json'), SCOPES);
  for (const id of ['U01ALICE', 'U02RTL01', 'U03DUPE1', 'U03UNI01']) {
    scope.post('/api/users.profile.get', field('user', id)).reply(200, fixture(`users.profile.get.${id}.json`), SCOPES);
  }
  return scope;
}
