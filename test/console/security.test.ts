/**
 * The console's sign-in, sign-out, cookies and limits against the attacks of an outside test, replayed
 * over HTTP with the headers a browser sends (Origin, Sec-Fetch-Site; no cookie on a cross-site post,
 * the cookie being SameSite=Strict). The service's public address is https://sig.example.test while
 * the requests reach it on 127.0.0.1: what counts is PUBLIC_BASE_URL, never the Host header.
 */
import { Agent, fetch as fetchVia } from 'undici';
import { describe, expect, it } from 'vitest';
import { createSignInLink, openSession } from '../../src/console/sessions.ts';
import { useApi } from '../api/helpers.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const PUBLIC = 'https://sig.example.test';
const SAME_ORIGIN = { origin: PUBLIC, 'sec-fetch-site': 'same-origin' };
const CROSS_SITE = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('console: sign-in and sign-out from the console only, one cookie name, limits', () => {
  const api = useApi({ PUBLIC_BASE_URL: PUBLIC, RATE_LIMIT_AUTH_FAILURES: '5', RATE_LIMIT_CONSOLE_ACTIONS: '20', CONSOLE_REPLAY_COOLDOWN_SECONDS: '60' });
  const post = (path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${api.base}${path}`, { method: 'POST', headers, body, redirect: 'manual' });
  const sessionWorkspace = async (cookie: string) => {
    const r = await fetch(`${api.base}/console/api/session`, { headers: { cookie } });
    return r.status === 200 ? ((await r.json()) as { data: { workspace: { id: string } } }).data.workspace.id : r.status;
  };

  it("login CSRF: a cross-site post of the attacker's link is refused and spends nothing; the console's own post signs in with a __Host- cookie", async () => {
    const { token } = await createSignInLink(api.t.ctx.pool, api.otherWs, 'cli:mallory', undefined, 'mallory@evil.example');
    const forged = await post('/console/sign-in', { ...FORM, ...CROSS_SITE }, `token=${token}`);
    const forgedText = await forged.text();
    console.log(
      `cross-site sign-in post of the attacker's link: ${forged.status}, set-cookie ${forged.headers.get('set-cookie')}, "${/<p>([^<]*)<\/p>/.exec(forgedText)?.[1]}"`,
    );
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie')).toBeNull();
    expect(forgedText).toMatch(
      /Signing in is accepted only from the console.s own pages: the browser says it came from another site \(Sec-Fetch-Site: cross-site\)/,
    );
    // Origin alone, Sec-Fetch-Site alone, a sandboxed frame's "null", no header at all: refused too.
    const variants: Record<string, string>[] = [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'same-site' }, { origin: 'null' }, {}];
    for (const headers of variants) {
      expect((await post('/console/sign-in', { ...FORM, ...headers }, `token=${token}`)).status, JSON.stringify(headers)).toBe(403);
    }
    // The link is still unused: the console's own page signs in with it.
    const ok = await post('/console/sign-in', { ...FORM, ...SAME_ORIGIN }, `token=${token}`);
    expect(ok.status).toBe(303);
    const cookie = ok.headers.get('set-cookie')!;
    // PUBLIC_BASE_URL is https: the __Host- cookie, Secure, though the request came to 127.0.0.1.
    expect(cookie).toMatch(/^__Host-sigsync_console=sgc_[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    expect(await sessionWorkspace(cookie.split(';')[0]!)).toBe(api.otherWs);
  });

  it('logout CSRF: a cross-site post is refused and the cookie stays; the console sign-out ends the session on the server', async () => {
    const session = await openSession(api.t.ctx.pool, api.ws, 'link', 'alice@acme.example');
    const cookie = `__Host-sigsync_console=${session.token}`;
    // A cross-site post carries no SameSite=Strict cookie.
    const forged = await post('/console/sign-out', CROSS_SITE);
    const forgedBody = (await forged.json()) as { error: { code: string } };
    const still = await sessionWorkspace(cookie);
    console.log(
      `cross-site sign-out post: ${forged.status} ${forgedBody.error.code}, set-cookie ${forged.headers.get('set-cookie')}, session still opens its workspace: ${still === api.ws}`,
    );
    expect(forged.status).toBe(403);
    expect(forged.headers.get('set-cookie')).toBeNull();
    expect(forgedBody.error.code).toBe('cross_site_request');
    expect(still).toBe(api.ws);
    // Without the CSRF token the console's own page cannot either; with it, the session ends.
    expect((await post('/console/sign-out', { ...SAME_ORIGIN, cookie })).status).toBe(403);
    const out = await post('/console/sign-out', { ...SAME_ORIGIN, cookie, 'x-csrf-token': session.csrfToken });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^__Host-sigsync_console=; .*Max-Age=0/);
    const after = await sessionWorkspace(cookie);
    console.log(
      `the console's own sign-out (same origin, CSRF token): ${out.status}, set-cookie ${out.headers.get('set-cookie')}, the old cookie then: ${after}`,
    );
    expect(after).toBe(401);
    const ended = await api.t.ctx.pool.query('select 1 from console_sessions where id = $1 and ended_at is not null', [session.id]);
    expect(ended.rowCount).toBe(1);
  });

  it('a planted plain sigsync_console cookie is ignored outside loopback, wherever it comes', async () => {
    const victim = await openSession(api.t.ctx.pool, api.ws, 'link', 'alice@acme.example');
    const attacker = await openSession(api.t.ctx.pool, api.otherWs, 'link', 'mallory@evil.example');
    const planted = await sessionWorkspace(`sigsync_console=${attacker.token}; __Host-sigsync_console=${victim.token}`);
    console.log(
      `planted plain cookie first (attacker's workspace ${api.otherWs}, victim's ${api.ws}): the session opens ${planted}; alone: ${await sessionWorkspace(`sigsync_console=${attacker.token}`)}`,
    );
    expect(planted).toBe(api.ws);
    expect(await sessionWorkspace(`__Host-sigsync_console=${victim.token}; sigsync_console=${attacker.token}`)).toBe(api.ws);
    expect(await sessionWorkspace(`sigsync_console=${attacker.token}`)).toBe(401);
    const page = await fetch(`${api.base}/console/integrations`, { headers: { cookie: `sigsync_console=${attacker.token}` } });
    expect(page.status).toBe(401);
  });

  it('25 replays of one mailbox: one runs, the others are told when it may run again or are rate limited', async () => {
    await insertTeammate(api.t.ctx.pool, api.ws, { displayName: 'Bob', emails: [{ address: 'bob@acme.test', primary: true }] });
    const session = await openSession(api.t.ctx.pool, api.ws, 'link', 'alice@acme.example');
    const headers = { cookie: `__Host-sigsync_console=${session.token}`, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' };
    const answers = await Promise.all(Array.from({ length: 25 }, () => post('/console/api/mailboxes/bob%40acme.test/replay', headers, '{}')));
    const statuses = answers.map((r) => r.status);
    const tally = statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});
    console.log(`25 concurrent replays of one mailbox (RATE_LIMIT_CONSOLE_ACTIONS 20, cooldown 60 s): ${JSON.stringify(tally)}`);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(24);
    const bodies = await Promise.all(
      answers.map(async (r) => ({
        status: r.status,
        retry: r.headers.get('retry-after'),
        body: (await r.json()) as { data?: { next_replay_at: string }; error?: { message: string } },
      })),
    );
    const ran = bodies.find((b) => b.status === 200)!;
    const next = ran.body.data!.next_replay_at;
    expect(Date.parse(next) - Date.now()).toBeGreaterThan(50_000);
    const cooled = bodies.filter((b) => b.body.error?.message.includes('may be replayed again at'));
    // 20 actions a minute per session: the first 20 reach the replay (one runs, 19 meet the cooldown), 5 are over the limit.
    expect(cooled).toHaveLength(19);
    for (const c of cooled) {
      expect(c.body.error!.message).toContain(next);
      expect(Number(c.retry)).toBeGreaterThan(50);
    }
    expect(bodies.filter((b) => b.body.error?.message.startsWith('Too many console actions in this session.'))).toHaveLength(5);
    const audit = await api.t.ctx.pool.query<{ action: string; actor: string }>(
      `select action, actor from audit_entries where workspace_id = $1 and action like 'mailbox.%'`,
      [api.ws],
    );
    expect(audit.rows).toEqual([{ action: 'mailbox.replay', actor: 'alice@acme.example' }]);
  });

  it('random session cookies count as failed sign-ins: past RATE_LIMIT_AUTH_FAILURES the address gets 429 before any lookup', async () => {
    // From its own client address (127.0.0.2), whose budget no other test of the file has spent.
    const own = new Agent({ localAddress: '127.0.0.2' });
    try {
      const get = (path: string, headers: Record<string, string>) => fetchVia(`${api.base}${path}`, { headers, dispatcher: own });
      const random = () => `__Host-sigsync_console=sgc_${'x'.repeat(20)}${Math.random().toString(36).slice(2).padEnd(23, 'a').slice(0, 23)}`;
      const statuses = [];
      for (let i = 0; i < 7; i++) statuses.push((await get('/console/api/session', { cookie: random() })).status);
      console.log(`7 random session cookies from one address (RATE_LIMIT_AUTH_FAILURES 5): ${JSON.stringify(statuses)}`);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      // The same budget as failed API keys: a valid key from this address is refused too until the minute ends.
      expect((await get('/v1/workspace', { authorization: `Bearer ${api.key}` })).status).toBe(429);
      // Another address keeps its own budget.
      expect((await api.call('GET', '/v1/workspace')).status).toBe(200);
    } finally {
      await own.close();
    }
  });
});
