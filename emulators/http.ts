/**
 * Shared plumbing of the emulated provider tenants: a loopback HTTP(S) server with knobs that tests
 * and benchmarks turn (latency, a quota answered with 429 + Retry-After, injected 5xx, revoked
 * credentials at request N, a malformed answer at request N) and request counters.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Knobs {
  /** Added to every answer, in ms. */
  latencyMs: number;
  /**
   * Quota per second the tenant accepts before answering 429 with Retry-After (0 = no limit), as a
   * moving average that allows bursts of up to one second's quota (a token bucket; Google's words
   * for its per-user Gmail limit). A request takes its route's `quotaCost` of it (1 unless the route
   * says less: Google counts a Gmail sendAs listing as 0.01 of a signature write).
   */
  quotaPerSecond: number;
  /**
   * The next this many API requests are answered 429 with Retry-After: 1, whatever their pace: a
   * burst of refusals on any machine (a quota refuses only a client fast enough to exceed it).
   */
  rateLimitNext: number;
  /** Share of requests answered with a 503 (0..1). */
  faultRate: number;
  /** From this request number on (1-based, API requests only), credentials are revoked. */
  revokeAtRequest: number | null;
  /** This request number gets a malformed answer. */
  malformedAtRequest: number | null;
  /** From this request number on, every API request gets a 503 (an outage), until cleared. */
  outageFromRequest: number | null;
  /**
   * When set, `malformedAtRequest` and `outageFromRequest` count only the calls of this route
   * (e.g. 'users.list': "the third users page is malformed").
   */
  faultRoute: string | null;
  /**
   * Holds requests unanswered: the API requests of `route` (of every route when null) past the
   * `after`-th wait until the knob is cleared or raised, then go on as usual. Tests stop a provider
   * at a known point this way (after the 14th users page, the 75th signature write) and act on the
   * state there, instead of racing the clock with latency. Several holds at once hold each its own
   * route.
   */
  hold: Hold | readonly Hold[] | null;
}

export interface Hold {
  route: string | null;
  after: number;
}

export const defaultKnobs = (): Knobs => ({
  latencyMs: 0,
  quotaPerSecond: 0,
  rateLimitNext: 0,
  faultRate: 0,
  revokeAtRequest: null,
  malformedAtRequest: null,
  outageFromRequest: null,
  faultRoute: null,
  hold: null,
});

export interface Counters {
  requests: number;
  byRoute: Record<string, number>;
  rateLimited: number;
  /** Quota taken by the API requests let through the quota (each its route's `quotaCost`). */
  quotaUsed: number;
  faults: number;
  /** Requests waiting on the `hold` knob right now. */
  held: number;
  /** API requests received and not answered yet. */
  inFlight: number;
}

export interface Ctx {
  req: http.IncomingMessage;
  url: URL;
  body: string;
  /** 1-based number of this API request. */
  n: number;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send this raw text instead of JSON. */
  raw?: string | Buffer;
}

export type Handler = (ctx: Ctx) => Reply | Promise<Reply>;

export interface Route {
  method: string;
  pattern: RegExp;
  name: string;
  handler: (ctx: Ctx, match: RegExpExecArray) => Reply | Promise<Reply>;
  /** Token endpoints and inspection are not counted against quotas and knobs. */
  control?: boolean;
  /** What one call takes of `quotaPerSecond` (default 1), where the provider charges calls differently. */
  quotaCost?: number;
}

export interface EmulatorServer {
  url: string;
  port: number;
  knobs: Knobs;
  counters: Counters;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ServeOptions {
  tls?: { key: string; cert: string };
  /** Answer for a revoked credential. */
  revokedReply: () => Reply;
  /** Answer for the quota. */
  rateLimitedReply: (retryAfterSeconds: number) => Reply;
  faultReply: () => Reply;
  malformedReply: () => Reply;
}

/** The quota left (`tokens`, up to one second's worth, at least 1) as of `at` (ms); it refills at the quota's rate. */
interface QuotaBucket {
  tokens: number;
  at: number;
}

/** A request's number among all API requests (`n`) and among its route's (`nRoute`), from 1. */
interface Numbered {
  n: number;
  nRoute: number;
}

/** Waits while a hold (`knobs.hold`) holds this request; answers whether it held it. */
async function waitWhileHeld(route: Route, knobs: Knobs, counters: Counters, { n, nRoute }: Numbered): Promise<boolean> {
  const holds = (h: Knobs['hold']): readonly Hold[] => (h === null ? [] : 'after' in h ? [h] : h);
  const isHeld = () => holds(knobs.hold).some((h) => (h.route === null ? n : h.route === route.name ? nRoute : 0) > h.after);
  if (!isHeld()) return false;
  counters.held++;
  while (isHeld()) await sleep(5);
  counters.held--;
  return true;
}

/**
 * The knobs' answer to one API request let through the holds, or null when the route itself
 * answers: a forced or quota 429, revoked credentials, a fault or outage, a malformed answer.
 */
function knobReply(route: Route, knobs: Knobs, counters: Counters, quota: QuotaBucket, opts: ServeOptions, { n, nRoute }: Numbered): Reply | null {
  const faultN = knobs.faultRoute === null ? n : knobs.faultRoute === route.name ? nRoute : -1;
  if (knobs.rateLimitNext > 0) {
    knobs.rateLimitNext--;
    counters.rateLimited++;
    return opts.rateLimitedReply(1);
  }
  const cost = route.quotaCost ?? 1;
  const perSecond = knobs.quotaPerSecond;
  if (perSecond) {
    const now = performance.now();
    quota.tokens = Math.min(Math.max(perSecond, 1), quota.tokens + ((now - quota.at) / 1000) * perSecond);
    quota.at = now;
    // A little tolerance, so that a hundred listings of 0.01 add up to one write, not a bit more.
    if (quota.tokens + 1e-9 < cost) {
      counters.rateLimited++;
      return opts.rateLimitedReply(Math.max(1, Math.ceil((cost - quota.tokens) / perSecond)));
    }
    quota.tokens -= cost;
  }
  counters.quotaUsed += cost;
  if (knobs.revokeAtRequest !== null && n >= knobs.revokeAtRequest) return opts.revokedReply();
  if ((knobs.outageFromRequest !== null && faultN >= knobs.outageFromRequest) || (knobs.faultRate && Math.random() < knobs.faultRate)) {
    counters.faults++;
    return opts.faultReply();
  }
  if (knobs.malformedAtRequest === faultN) return opts.malformedReply();
  return null;
}

export async function serve(routes: Route[], opts: ServeOptions, knobs: Knobs = defaultKnobs()): Promise<EmulatorServer> {
  const counters: Counters = { requests: 0, byRoute: {}, rateLimited: 0, quotaUsed: 0, faults: 0, held: 0, inFlight: 0 };
  // Full at the first request: the refill is capped at one second's quota (at least one request).
  const quota: QuotaBucket = { tokens: Number.POSITIVE_INFINITY, at: performance.now() };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    // The latency runs from the request's arrival (its headers parsed), before its body is read.
    const arrived = performance.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://emulator');
    let reply: Reply = { status: 404, body: { error: { code: 404, message: `no route ${req.method} ${url.pathname}` } } };
    for (const route of routes) {
      const m = route.method === req.method ? route.pattern.exec(url.pathname) : null;
      if (!m) continue;
      if (route.control) {
        reply = await route.handler({ req, url, body, n: 0 }, m);
        break;
      }
      const n = ++counters.requests;
      const number = { n, nRoute: (counters.byRoute[route.name] = (counters.byRoute[route.name] ?? 0) + 1) };
      counters.inFlight++;
      try {
        const held = await waitWhileHeld(route, knobs, counters, number);
        // The latency is the provider's whole answer time, from the request's arrival (or its
        // release from a hold): the answer is built and serialised (to bytes) while it runs, so
        // that the emulator's own work does not add to what a benchmark measures.
        const answerAt = (held ? performance.now() : arrived) + knobs.latencyMs;
        reply = knobReply(route, knobs, counters, quota, opts, number) ?? (await route.handler({ req, url, body, n }, m));
        const payload = serialise(reply);
        const wait = answerAt - performance.now();
        if (wait > 0) await sleep(wait);
        return send(res, reply, payload);
      } finally {
        counters.inFlight--;
      }
    }
    send(res, reply, serialise(reply));
  };

  const serialise = (reply: Reply) =>
    typeof reply.raw === 'string' ? Buffer.from(reply.raw) : (reply.raw ?? Buffer.from(reply.body === undefined ? '' : JSON.stringify(reply.body)));
  const send = (res: http.ServerResponse, reply: Reply, payload: Buffer) => {
    res.writeHead(reply.status, { 'content-type': reply.raw === undefined ? 'application/json; charset=utf-8' : 'text/plain', ...(reply.headers ?? {}) });
    res.end(payload);
  };

  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 500, message: String(err) } }));
    });
  };
  const server = opts.tls ? https.createServer({ key: opts.tls.key, cert: opts.tls.cert }, listener) : http.createServer(listener);
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    knobs,
    counters,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Parses a JSON object body, or else a form body (a token request), told apart by the first
 * character rather than by a failed JSON.parse, whose exception cost the token route most of its
 * CPU. A JSON body that does not parse is still read as a form, as before.
 */
export function parseBody(body: string): Record<string, string> {
  const text = body.trimStart();
  if (!text) return {};
  if (text.startsWith('{')) {
    try {
      return JSON.parse(text) as Record<string, string>;
    } catch {
      // read as a form below
    }
  }
  return Object.fromEntries(new URLSearchParams(body));
}

/**
 * An index over a tenant's list (users, members) by keys, built once and rebuilt only when the list
 * changed: another array, another length, another first or last item, or an item found only by a
 * scan (changed in place). A lookup costs a map probe instead of a scan of every item, so that an
 * emulator's cost per request does not grow with the tenant; an item that does not exist costs the
 * scan it always did. `matches` confirms a hit (and finds the item when the index is stale).
 */
export function listIndex<T>(list: () => T[], keysOf: (item: T) => string[]): (keys: string[], matches: (item: T) => boolean) => T | undefined {
  let built: { items: T[]; length: number; first: T | undefined; last: T | undefined; byKey: Map<string, T> } | undefined;
  const current = () => {
    const items = list();
    if (!built || built.items !== items || built.length !== items.length || built.first !== items[0] || built.last !== items.at(-1)) {
      const byKey = new Map<string, T>();
      // The first item with a key wins, as a scan would find it.
      for (let i = items.length - 1; i >= 0; i--) for (const k of keysOf(items[i]!)) byKey.set(k, items[i]!);
      built = { items, length: items.length, first: items[0], last: items.at(-1), byKey };
    }
    return built.byKey;
  };
  return (keys, matches) => {
    const index = current();
    for (const k of keys) {
      const hit = index.get(k);
      if (hit !== undefined && matches(hit)) return hit;
    }
    const found = list().find(matches);
    if (found !== undefined) built = undefined;
    return found;
  };
}
