/**
 * Per-address limits of the unauthenticated routes that query the database: asset bytes, the
 * browser script, and requests answered 401 (a well-formed key that does not exist). Past each
 * limit the answer is 429 with Retry-After, and another address is not affected.
 */
import { describe, expect, it } from 'vitest';
import { setEventTracking } from '../../src/db/workspaces.ts';
import { useApi } from './helpers.ts';

describe('per-address limits of unauthenticated routes', () => {
  const api = useApi({ RATE_LIMIT_ASSETS: '3', RATE_LIMIT_SCRIPT: '3', RATE_LIMIT_AUTH_FAILURES: '3', TRUST_PROXY: '127.0.0.1' });
  const from = (address: string, headers: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': address, ...headers } });
  const statuses = async (n: number, url: string, init: RequestInit) => {
    const out = [];
    for (let i = 0; i < n; i++) out.push((await fetch(url, init)).status);
    return out;
  };

  it('GET /assets/{token}: 3 a minute per address', async () => {
    const unknown = `${api.base}/assets/${'A'.repeat(43)}`;
    expect(await statuses(5, unknown, from('198.51.100.1'))).toEqual([404, 404, 404, 429, 429]);
    const r = await fetch(unknown, from('198.51.100.1'));
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await r.json()) as { error: unknown }).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect((await fetch(unknown, from('198.51.100.2'))).status).toBe(404);
  });

  it('GET /t/{tracking_id}/script.js: 3 a minute per address', async () => {
    await setEventTracking(api.t.ctx.pool, api.ws, true);
    const id = (await api.t.ctx.pool.query('select event_tracking_id from workspaces where id = $1', [api.ws])).rows[0].event_tracking_id;
    expect(await statuses(5, `${api.base}/t/${id}/script.js`, from('198.51.100.3'))).toEqual([200, 200, 200, 429, 429]);
    expect((await fetch(`${api.base}/t/${id}/script.js`, from('198.51.100.4'))).status).toBe(200);
  });

  it('401s: 3 a minute per address, then 429 before any key is looked up, on routes and unknown /v1 paths alike', async () => {
    const unknownKey = { authorization: `Bearer sgs_${'x'.repeat(32)}` };
    expect(await statuses(3, `${api.base}/v1/signatures`, from('198.51.100.5', unknownKey))).toEqual([401, 401, 401]);
    expect(await statuses(2, `${api.base}/v1/no-such-route`, from('198.51.100.5', unknownKey))).toEqual([429, 429]);
    expect((await fetch(`${api.base}/v1/signatures`, from('198.51.100.5', { authorization: `Bearer ${api.key}` }))).status).toBe(429);
    expect(await statuses(4, `${api.base}/v1/no-such-route`, from('198.51.100.6', unknownKey))).toEqual([401, 401, 401, 429]);
    // A valid key from another address is served, and does not count.
    expect(await statuses(5, `${api.base}/v1/signatures`, from('198.51.100.7', { authorization: `Bearer ${api.key}` }))).toEqual([200, 200, 200, 200, 200]);
  });
});
