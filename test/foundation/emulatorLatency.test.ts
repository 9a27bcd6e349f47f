/**
 * The emulators' `latencyMs` is the provider's whole answer time: a request is answered that long
 * after it arrives, and the answer is built while it runs, so the emulator's own work (a page of
 * 500 users, serialised) does not add to what a benchmark measures against pages × latency.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultKnobs, serve, type EmulatorServer } from '../../emulators/http.ts';

const LATENCY_MS = 1000;

describe('emulator latency', () => {
  let server: EmulatorServer | undefined;
  afterEach(() => server?.close());

  it('builds the answer as the request arrives and sends it once the latency has passed', async () => {
    let builtAt = 0;
    const fail = () => ({ status: 500 });
    server = await serve(
      [{ method: 'GET', pattern: /^\/page$/, name: 'page', handler: () => ((builtAt = performance.now()), { status: 200, body: { users: [1, 2, 3] } }) }],
      { revokedReply: fail, rateLimitedReply: fail, faultReply: fail, malformedReply: fail },
      { ...defaultKnobs(), latencyMs: LATENCY_MS },
    );
    const res = await fetch(`${server.url}/page`);
    const answeredAt = performance.now();

    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { users: [1, 2, 3] } });
    // Built when the request arrived, answered the whole latency later (one process, one clock).
    expect(answeredAt - builtAt).toBeGreaterThanOrEqual(LATENCY_MS - 5);
    expect(server.counters.inFlight).toBe(0);
  });

  it('counts the latency from the release of a held request, not from its arrival', async () => {
    const fail = () => ({ status: 500 });
    server = await serve(
      [{ method: 'GET', pattern: /^\/page$/, name: 'page', handler: () => ({ status: 200, body: {} }) }],
      { revokedReply: fail, rateLimitedReply: fail, faultReply: fail, malformedReply: fail },
      { ...defaultKnobs(), latencyMs: 300, hold: { route: 'page', after: 0 } },
    );
    const answered = fetch(`${server.url}/page`).then(() => performance.now());
    while (server.counters.held === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 400)); // held longer than the latency
    const released = performance.now();
    server.knobs.hold = null;
    expect((await answered) - released).toBeGreaterThanOrEqual(300 - 5);
  });
});
