/**
 * An emulated Slack workspace on loopback: the Web API methods the Slack connectors call
 * (auth.test, team.profile.get, users.list with cursor paging, users.profile.get,
 * users.lookupByEmail, conversations.open, chat.postMessage), answering in Slack's shapes: HTTP 200
 * with `{"ok":false,"error":"..."}` for method errors, and 429 with Retry-After and
 * `{"ok":false,"error":"ratelimited"}` past the quota. Every DM posted is kept for inspection.
 * Point an integration at it with config `{ "base_url": url + "/api/" }`.
 */
import crypto from 'node:crypto';
import type { SlackUser } from '../connectors/slack/schemas.ts';
import { defaultKnobs, listIndex, parseBody, serve, type EmulatorServer, type Knobs, type Reply, type Route } from './http.ts';

/** A member as Slack holds it: the connector's `SlackUser`, with the names every member has. */
export type SlackMemberRaw = SlackUser & { name: string; real_name: string; profile: SlackUser['profile'] & { real_name: string; display_name: string } };

export interface SlackTenant {
  teamId: string;
  botToken: string;
  members: SlackMemberRaw[];
}

export interface SlackDm {
  channel: string;
  user: string;
  /** The member's email, when known. */
  email: string | null;
  text: string;
  blocks: unknown[];
  ts: string;
}

export const SLACK_SCOPES = 'users:read,users:read.email,users.profile:read,im:write,chat:write';

/** A deterministic workspace of `n` members with addresses `user{i}@{domain}`. */
export function generateSlackTenant(n: number, domain = 'example.test'): SlackTenant {
  const members: SlackMemberRaw[] = [];
  for (let i = 0; i < n; i++) {
    members.push({
      id: `U${String(i).padStart(8, '0')}`,
      name: `user${i}`,
      real_name: `Given${i} Family${i}`,
      profile: {
        real_name: `Given${i} Family${i}`,
        display_name: `user${i}`,
        first_name: `Given${i}`,
        last_name: `Family${i}`,
        title: '',
        phone: '',
        email: `user${i}@${domain}`,
      },
    });
  }
  return { teamId: 'T0SANDBOX', botToken: 'xoxb-sandbox-0000-bot-token', members };
}

export interface SlackEmulator extends EmulatorServer {
  tenant: SlackTenant;
  /** Every DM posted, oldest first. */
  dms: SlackDm[];
  /** DMs per member email (lowercase). */
  dmsTo(email: string): SlackDm[];
  addMember(member: SlackMemberRaw): void;
  removeMember(id: string): void;
}

const ok = (body: Record<string, unknown>, headers: Record<string, string> = {}): Reply => ({
  status: 200,
  body: { ok: true, ...body },
  headers: { 'x-oauth-scopes': SLACK_SCOPES, ...headers },
});
const fail = (error: string, extra: Record<string, unknown> = {}): Reply => ({ status: 200, body: { ok: false, error, ...extra } });

/** Every Web API method: POST /api/<method>, bot token in the Authorization header. */
function method(tenant: SlackTenant, name: string, fn: (args: Record<string, string>) => Reply): Route {
  return {
    method: 'POST',
    pattern: new RegExp(`^/api/${name.replace('.', '\\.')}$`),
    name,
    handler: ({ req, body }) => {
      const auth = req.headers.authorization;
      const args = parseBody(body);
      const token = typeof auth === 'string' ? auth.replace(/^Bearer /, '') : args.token;
      if (!token) return fail('not_authed');
      if (token !== tenant.botToken) return fail('invalid_auth');
      return fn(args);
    },
  };
}

/** The emulated workspace's state shared by its methods: members indexed, DM channels, DMs posted. */
function slackState(tenant: SlackTenant) {
  const channels = new Map<string, string>();
  const channelUsers = new Map<string, string>();
  const lookup = listIndex(
    () => tenant.members,
    (m) => [`id:${m.id}`, `email:${(m.profile.email ?? '').toLowerCase()}`],
  );
  return {
    tenant,
    dms: [] as SlackDm[],
    lookup,
    member: (id: string) => lookup([`id:${id}`], (m) => m.id === id),
    /** Where the page a cursor names starts, so that paging does not scan the members for it. */
    cursorOffset: new Map<string, number>(),
    channelUsers,
    channelOf: (user: string) => {
      let ch = channels.get(user);
      if (!ch) {
        ch = `D${crypto.createHash('sha256').update(user).digest('hex').slice(0, 10).toUpperCase()}`;
        channels.set(user, ch);
        channelUsers.set(ch, user);
      }
      return ch;
    },
  };
}

type SlackState = ReturnType<typeof slackState>;

/** auth.test, team.profile.get and the member directory. */
function directoryMethods(st: SlackState): Route[] {
  const { tenant, member, lookup, cursorOffset } = st;
  return [
    method(st.tenant, 'auth.test', () =>
      ok({
        url: `https://${tenant.teamId.toLowerCase()}.slack.test/`,
        team: 'Sandbox',
        user: 'sigsync',
        team_id: tenant.teamId,
        user_id: 'U0BOT0001',
        bot_id: 'B0BOT0001',
      }),
    ),
    method(st.tenant, 'team.profile.get', () => ok({ profile: { fields: [] } })),
    method(st.tenant, 'users.list', (args) => {
      const limit = Math.min(Number(args.limit ?? 0) || 1000, 1000);
      const cursor = args.cursor;
      let offset = 0;
      if (cursor) {
        const id = /^user:(.+)$/.exec(Buffer.from(cursor, 'base64').toString('utf8'))?.[1];
        const at = id ? member(id) : undefined;
        const hint = cursorOffset.get(cursor);
        offset = at === undefined ? -1 : hint !== undefined && tenant.members[hint] === at ? hint : tenant.members.indexOf(at);
        if (offset < 0) return fail('invalid_cursor');
      }
      const slice = tenant.members.slice(offset, offset + limit);
      const next = tenant.members[offset + limit];
      if (next) cursorOffset.set(Buffer.from(`user:${next.id}`).toString('base64'), offset + limit);
      return ok({
        members: slice.map((m) => ({ team_id: tenant.teamId, deleted: false, is_bot: false, ...m })),
        cache_ts: Math.floor(Date.now() / 1000),
        response_metadata: { next_cursor: next ? Buffer.from(`user:${next.id}`).toString('base64') : '' },
      });
    }),
    method(st.tenant, 'users.profile.get', (args) => {
      const m = member(args.user ?? '');
      if (!m) return fail('user_not_found');
      return ok({ profile: { ...m.profile, fields: [] } });
    }),
    method(st.tenant, 'users.lookupByEmail', (args) => {
      const email = (args.email ?? '').toLowerCase();
      const m = lookup([`email:${email}`], (x) => (x.profile.email ?? '').toLowerCase() === email);
      if (!m) return fail('users_not_found');
      return ok({ user: { team_id: tenant.teamId, deleted: false, is_bot: false, ...m } });
    }),
  ];
}

/** Direct messages: open a DM channel, post to it. */
function messageMethods(st: SlackState): Route[] {
  const { member, channelOf, channelUsers, dms } = st;
  return [
    method(st.tenant, 'conversations.open', (args) => {
      const users = (args.users ?? '').split(',').filter(Boolean);
      if (users.length !== 1) return fail(users.length ? 'not_enough_users' : 'users_list_not_supplied');
      const m = member(users[0]!);
      if (!m) return fail('user_not_found');
      if (m.deleted) return fail('user_disabled');
      return ok({ channel: { id: channelOf(m.id) } });
    }),
    method(st.tenant, 'chat.postMessage', (args) => {
      const channel = args.channel ?? '';
      const user = channelUsers.get(channel);
      if (!user) return fail('channel_not_found');
      const text = args.text ?? '';
      if (text.length > 40_000) return fail('msg_too_long');
      let blocks: unknown[] = [];
      try {
        blocks = args.blocks ? (JSON.parse(args.blocks) as unknown[]) : [];
      } catch {
        return fail('invalid_blocks');
      }
      const ts = `${Math.floor(Date.now() / 1000)}.${String(dms.length + 1).padStart(6, '0')}`;
      dms.push({ channel, user, email: member(user)?.profile.email?.toLowerCase() ?? null, text, blocks, ts });
      return ok({ channel, ts, message: { type: 'message', text, user: 'U0BOT0001', ts, blocks } });
    }),
  ];
}

export async function startSlackEmulator(tenant: SlackTenant = generateSlackTenant(25), knobs: Knobs = defaultKnobs()): Promise<SlackEmulator> {
  const st = slackState(tenant);
  const { dms, member } = st;
  const server = await serve(
    [...directoryMethods(st), ...messageMethods(st)],
    {
      revokedReply: () => fail('token_revoked'),
      rateLimitedReply: (s) => ({ status: 429, body: { ok: false, error: 'ratelimited' }, headers: { 'retry-after': String(s) } }),
      faultReply: () => ({ status: 503, raw: 'Service Unavailable' }),
      malformedReply: () => ({ status: 200, body: { ok: true, members: [{ id: null, profile: 'broken' }] } }),
    },
    knobs,
  );

  return Object.assign(server, {
    tenant,
    dms,
    dmsTo: (email: string) => dms.filter((d) => d.email === email.toLowerCase()),
    addMember: (m: SlackMemberRaw) => {
      tenant.members.push(m);
    },
    removeMember: (id: string) => {
      const m = member(id);
      if (m) m.deleted = true;
    },
  });
}
