/**
 * The emulators' `latencyMs` is the provider's whole answer time: a request is answered that long
 * after it arrives, and the answer is built while it runs, so the emulator's own work (a page of
 * 500 users, serialised) does not add to what a benchmark measures against pages × latency.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultKnobs, serve, type EmulatorServer } from '../../src/sandbox/http.ts';

const LATENCY_MS = 3000;

const until = async (cond: () => boolean, timeoutMs: number) => {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('emulator latency', () => {
  let server: EmulatorServer | undefined;
  afterEach(() => server?.close());

  it('builds the answer as the request arrives and sends it once the latency has passed', async () => {
    let built = false;
    const fail = () => ({ status: 500 });
    server = await serve(
      [{ method: 'GET', pattern: /^\/page$/, name: 'page', handler: () => ((built = true), { status: 200, body: { users: [1, 2, 3] } }) }],
      { revokedReply: fail, rateLimitedReply: fail, faultReply: fail, malformedReply: fail },
      { ...defaultKnobs(), latencyMs: LATENCY_MS },
    );
    const started = performance.now();
    let answered = false;
    const answer = fetch(`${server.url}/page`).then(async (r) => ((answered = true), { status: r.status, body: await r.json() }));

    await until(() => built, LATENCY_MS - 500);
    expect(answered).toBe(false);
    expect(server.counters.inFlight).toBe(1);

    expect(await answer).toEqual({ status: 200, body: { users: [1, 2, 3] } });
    expect(performance.now() - started).toBeGreaterThanOrEqual(LATENCY_MS - 5);
    expect(server.counters.inFlight).toBe(0);
  });
});
