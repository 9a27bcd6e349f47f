/**
 * Every console action is in the audit trail (docs/console.md, "The audit trail"): the test walks
 * every POST route the server registers under /console (sign-in, sign-out and the actions under
 * /console/api), makes each succeed with a session's cookie and CSRF token, and checks that each
 * added exactly one entry naming the person the sign-in link was for, the action, the target and
 * the time. A console action added without an entry, or without a step here, fails.
 */
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createSignInLink, openSession } from '../../src/console/sessions.ts';
import { emitEvent } from '../../src/db/outbox.ts';
import { dispatchBatch, recordAttempt } from '../../src/webhooks/deliveries.ts';
import { seedIntegration, seedTeammate, useApi } from '../api/helpers.ts';
import { insertWebhookEndpoint } from '../helpers/fixtures/webhooks.ts';

const PUBLIC = 'https://sig.example.test';
const SAME_ORIGIN = { origin: PUBLIC, 'sec-fetch-site': 'same-origin' };
const PERSON = 'alice@acme.example';

interface Entry {
  at: string;
  actor: { kind: string; name: string; id: string | null };
  action: string;
  target: { kind: string; id: string };
}

/** One console action made to succeed: the request and the entry it must leave. */
interface Step {
  send(): Promise<Response>;
  status: number;
  action: string;
  target: [kind: string, id: string | RegExp];
}

describe('console: every action is in the audit trail', () => {
  const server: { it?: FastifyInstance } = {};
  const api = useApi(
    { PUBLIC_BASE_URL: PUBLIC, RATE_LIMIT_CONSOLE_ACTIONS: '100', CONSOLE_REPLAY_COOLDOWN_SECONDS: '0' },
    { routes: [async (s) => void (server.it = s)] },
  );

  /** The POST routes under /console, as the server registered them (fastify's route tree, one route a line). */
  const consolePosts = (): string[] =>
    server
      .it!.printRoutes({ commonPrefix: false, method: 'POST' })
      .split('\n')
      .map((line) => /(\/console\/\S*) \(POST\)/.exec(line)?.[1])
      .filter((p): p is string => p !== undefined)
      .sort();

  it('sign-in, sign-out and each action under /console/api record one entry with the person, action, target and time', async () => {
    const { pool } = api.t.ctx;
    const session = await openSession(pool, api.ws, 'link', PERSON);
    const cookie = `__Host-sigsync_console=${session.token}`;
    const act = (path: string, body: unknown = {}) =>
      fetch(`${api.base}${path}`, {
        method: 'POST',
        headers: { ...SAME_ORIGIN, cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const directory = await seedIntegration(pool, api.ws, { category: 'teammates', name: 'Directory' });
    const bob = await seedTeammate(pool, api.ws, 'Bob', [{ address: 'bob@acme.test', primary: true }]);
    await insertWebhookEndpoint(pool, api.ws, { url: 'https://hooks.example.test/in' });
    await emitEvent(pool, api.ws, 'teammate.created', { teammate: { uuid: bob.id, display_name: 'Bob' }, emails: [] });
    const [delivery] = (await dispatchBatch(pool, api.ws)).deliveries;
    await recordAttempt(pool, delivery!, { previousAttempts: 0, outcome: 'failed', statusCode: 500, durationMs: 5, error: 'HTTP 500', retryInMs: null });
    const link = await createSignInLink(pool, api.ws, 'cli:admin', undefined, PERSON);
    const retried = crypto.randomUUID();

    const steps: Record<string, Step> = {
      '/console/sign-in': {
        send: () =>
          fetch(`${api.base}/console/sign-in`, {
            method: 'POST',
            redirect: 'manual',
            headers: { ...SAME_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
            body: `token=${link.token}`,
          }),
        status: 303,
        action: 'console.sign_in',
        target: ['console_session', /^[0-9a-f-]{36}$/],
      },
      '/console/api/integrations/:id/sync': {
        send: () => act(`/console/api/integrations/${directory}/sync`),
        status: 202,
        action: 'integration.sync',
        target: ['integration', directory],
      },
      '/console/api/mailboxes/:address/replay': {
        send: () => act('/console/api/mailboxes/bob%40acme.test/replay'),
        status: 200,
        action: 'mailbox.replay',
        target: ['mailbox', 'bob@acme.test'],
      },
      '/console/api/installations/retry': {
        send: () => act('/console/api/installations/retry', { installation_ids: [retried] }),
        status: 202,
        action: 'installations.retry',
        target: ['installation', ''],
      },
      '/console/api/webhooks/deliveries/:id/redeliver': {
        send: () => act(`/console/api/webhooks/deliveries/${delivery}/redeliver`),
        status: 202,
        action: 'webhook.redeliver',
        target: ['webhook_delivery', delivery!],
      },
      '/console/sign-out': { send: () => act('/console/sign-out'), status: 204, action: 'console.sign_out', target: ['console_session', session.id] },
    };
    // A POST route added under /console without a step here (and so without a checked entry) fails.
    expect(consolePosts()).toEqual(Object.keys(steps).sort());

    const entries = async () => (await api.call('GET', '/v1/audit_entries?per_page=100')).body.data as Entry[];
    for (const [route, step] of Object.entries(steps)) {
      const before = (await entries()).length;
      const r = await step.send();
      expect(r.status, `${route}: ${await r.text()}`).toBe(step.status);
      const now = await entries();
      expect(now.length, route).toBe(before + 1);
      const entry = now[0]!;
      expect({ route, action: entry.action, actor: entry.actor, kind: entry.target.kind }).toEqual({
        route,
        action: step.action,
        actor: { kind: 'console', name: PERSON, id: expect.any(String) },
        kind: step.target[0],
      });
      expect(entry.target.id, route).toMatch(typeof step.target[1] === 'string' ? new RegExp(`^${step.target[1].replace(/[.]/g, '\\.')}$`) : step.target[1]);
      expect(Math.abs(Date.now() - Date.parse(entry.at)), route).toBeLessThan(60_000);
    }
    // The actions ran as the session opened above; the sign-in opened a session of its own.
    const all = await entries();
    expect(all.filter((e) => e.action !== 'console.sign_in').every((e) => e.actor.id === session.id)).toBe(true);
    expect(all.find((e) => e.action === 'installations.retry')).toMatchObject({ details: { installation_ids: [retried], queued: 0 } });
  });
});
