/**
 * The recipient's opt-out (docs/privacy.md), outside /v1 and without auth: the token of the link a
 * signature carries is the capability (an HMAC of the workspace id, src/analytics/privacy.ts).
 *
 *   GET  /o/{token}   a page that asks the person to confirm (link scanners fetch links; a GET changes nothing)
 *   POST /o/{token}   the confirmation: this browser (keyed hash of address and user agent) and its
 *                     address are tracked per person no more in the token's workspace, retroactively
 *
 * What opts out is the client that sends the request: a link names a workspace only, so nobody can
 * opt out anyone but themselves. A forged token is 404; bodies are ignored and at most 1 KB;
 * RATE_LIMIT_OPT_OUT requests per minute per client address (429 past it).
 *
 * `optOutLookup` is what the tracked-link redirect asks (once a minute per client): whether a
 * click's client opted out, so that its destination gets no click id.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { addressHash, clientHash } from '../analytics/bots.ts';
import { OptOutTokens, optedOut, optOut } from '../analytics/privacy.ts';
import { recentRows } from '../analytics/recent.ts';
import { withTx } from '../db/tx.ts';
import { LRUCache } from 'lru-cache';
import { limitPerAddress } from './rateLimits.ts';

const page = (
  title: string,
  body: string,
) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><meta name="viewport" content="width=device-width">
<title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>
`;
const ASK = page(
  'Stop tracking',
  `<p>Signatures of this organisation count when their images are shown and their links are followed. Confirm to stop linking these to you in this browser and from this network, including what was already recorded.</p>
<form method="post"><button type="submit">Stop tracking me</button></form>`,
);
const DONE = page(
  'Tracking stopped',
  '<p>Views and clicks from this browser and network are no longer linked to you, including those already recorded. Counts without any link to you remain.</p>',
);
const NOT_FOUND = page('Link not valid', '<p>This link is incomplete or was altered.</p>');

const html = (reply: FastifyReply, status: number, body: string) =>
  reply
    .status(status)
    .header('cache-control', 'no-store')
    .header('x-robots-tag', 'noindex')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(body);

/** A client's keyed hashes: its browser (address and user agent) and its address. */
export interface ClientKeys {
  browser: string;
  address: string;
}

/** Clients seen lately, per process: a client following several links is hashed once (two HMACs a miss, a map read a hit). */
const CLIENTS_KEPT = 10_000;
const recentClients = new WeakMap<AppContext, LRUCache<string, ClientKeys>>();

/**
 * The keys of the request's client, computed once per request (the redirect records the same ones).
 * Kept a minute per address and user agent (in memory only, bounded, as the rate limiter keeps
 * addresses): the same text always gives the same keys, so keeping them changes no answer.
 */
export function clientKeys(app: AppContext, req: FastifyRequest): ClientKeys {
  let kept = recentClients.get(app);
  if (!kept) recentClients.set(app, (kept = new LRUCache<string, ClientKeys>({ max: CLIENTS_KEPT, ttl: 60_000 })));
  const ua = req.headers['user-agent'];
  const key = `${req.ip}\n${ua ?? ''}`;
  let keys = kept.get(key);
  if (!keys) kept.set(key, (keys = { browser: clientHash(app.secrets, req.ip, ua), address: addressHash(app.secrets, req.ip) }));
  return keys;
}

interface Lookup {
  ask(workspaceId: string, client: ClientKeys): Promise<boolean>;
  /** What `ask` would answer when it needs no read (known or held); undefined when it does. */
  known(workspaceId: string, client: ClientKeys): boolean | undefined;
  /** An opt-out this process just recorded: known at once, before the minute's read runs out. */
  note(workspaceId: string, client: ClientKeys): void;
}
const lookups = new WeakMap<AppContext, Lookup>();

/**
 * Whether the client of a request opted out in a workspace, read once a minute per client (another
 * process's opt-out is known within the minute; this process's at once).
 */
export function optOutLookup(app: AppContext): Lookup {
  const known = lookups.get(app);
  if (known) return known;
  const keyOf = (ws: string, c: ClientKeys) => `${ws}|${c.browser}|${c.address}`;
  const fresh = new LRUCache<string, true>({ max: 10_000, ttl: 120_000 });
  const recent = recentRows(
    async (key) => {
      const [ws, browser, address] = key.split('|') as [string, string, string];
      return (await optedOut(app.pool, ws, browser, address)) ? true : null;
    },
    { ttlMs: 60_000, max: 100_000 },
  );
  const lookup: Lookup = {
    ask: async (ws, client) => {
      const key = keyOf(ws, client);
      return fresh.has(key) || (await recent(key)) === true;
    },
    known: (ws, client) => {
      const key = keyOf(ws, client);
      if (fresh.has(key)) return true;
      const held = recent.held(key);
      return held && held.row === true;
    },
    note: (ws, client) => void fresh.set(keyOf(ws, client), true),
  };
  lookups.set(app, lookup);
  return lookup;
}

export async function optOutRoutes(server: FastifyInstance, app: AppContext): Promise<void> {
  const tokens = new OptOutTokens(app.secrets);
  await server.register(async (scope) => {
    await limitPerAddress(scope, app.config.RATE_LIMIT_OPT_OUT, 'Too many opt-out requests from this address.');
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { bodyLimit: 1024 }, (_req, _payload, done) => done(null, undefined));
    scope.get<{ Params: { token: string } }>('/o/:token', async (req, reply) =>
      tokens.verify(req.params.token) ? html(reply, 200, ASK) : html(reply, 404, NOT_FOUND),
    );
    scope.post<{ Params: { token: string } }>('/o/:token', async (req, reply) => {
      const ws = tokens.verify(req.params.token);
      if (!ws) return html(reply, 404, NOT_FOUND);
      const client = clientKeys(app, req);
      const done = await withTx(app.pool, (c) => optOut(c, ws, client.browser, client.address));
      optOutLookup(app).note(ws, client);
      req.log.info({ workspace_id: ws, ...done }, 'a recipient opted out');
      return html(reply, 200, DONE);
    });
  });
}
