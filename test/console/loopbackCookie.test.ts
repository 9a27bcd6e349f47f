/**
 * Outside loopback only the `__Host-` cookie counts (docs/console.md, "The rules"). A server that
 * listens beyond loopback without PUBLIC_BASE_URL (HOST=0.0.0.0: the base URL defaults to
 * http://0.0.0.0:PORT, plain http on no loopback host) reads the plain `sigsync_console` cookie only
 * from this machine's own addresses; from any other client address it opens nothing. Client
 * addresses come from X-Forwarded-For (TRUST_PROXY is the loopback).
 */
import { describe, expect, it } from 'vitest';
import { openSession } from '../../src/console/sessions.ts';
import { useApi } from '../api/helpers.ts';

describe('console: the plain cookie name outside loopback', () => {
  const api = useApi({ HOST: '0.0.0.0', TRUST_PROXY: '127.0.0.1' });
  const session = async (cookie: string, from?: string) => {
    const r = await fetch(`${api.base}/console/api/session`, { headers: { cookie, ...(from ? { 'x-forwarded-for': from } : {}) } });
    return r.status;
  };

  it('opens the session from a loopback client only', async () => {
    expect(api.t.ctx.config.PUBLIC_BASE_URL).toMatch(/^http:\/\/0\.0\.0\.0:/);
    const s = await openSession(api.t.ctx.pool, api.ws, 'link', 'alice@acme.example');
    const plain = `sigsync_console=${s.token}`;
    expect(await session(plain)).toBe(200);
    expect(await session(plain, '127.0.0.5')).toBe(200);
    expect(await session(plain, '203.0.113.7')).toBe(401);
    expect(await session(plain, '10.1.2.3')).toBe(401);
    // The /v1 API with the cookie, the same.
    const v1 = await fetch(`${api.base}/v1/workspace`, { headers: { cookie: plain, 'x-forwarded-for': '203.0.113.7' } });
    expect(v1.status).toBe(401);
  });
});
