/**
 * The add-in route's limits and conditional answers against a stranger: failed keys count against
 * the client address as on every /v1 path (429 before the key is looked up), key-only mode's limit
 * is fair per client (per key, client address and mailbox, and per key and address across
 * mailboxes), and `If-None-Match: *` never passes for holding the current version. Client
 * addresses come from X-Forwarded-For (TRUST_PROXY is the loopback).
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/db/apiKeys.ts';
import { forgetRecordedFetches } from '../../src/addin/clients.ts';
import { useApi } from '../api/helpers.ts';
import { CLIENT_ID, seedAddinWorld, type AddinWorld } from './fixtures.ts';

const PER_MAILBOX = 4;
const FAILURES = 5;

describe('GET /v1/addin/signature: limits and conditions', () => {
  const api = useApi({
    ADDIN_ENTRA_CLIENT_ID: CLIENT_ID,
    ADDIN_CACHE_SECONDS: '0',
    RATE_LIMIT_ADDIN: String(PER_MAILBOX),
    RATE_LIMIT_AUTH_FAILURES: String(FAILURES),
    TRUST_PROXY: '127.0.0.1',
  });
  let w: AddinWorld;

  const get = async (email: string, bearer: string, from: string, headers: Record<string, string> = {}, query = '') => {
    const r = await fetch(`${api.base}/v1/addin/signature?email=${encodeURIComponent(email)}${query}`, {
      headers: {
        authorization: `Bearer ${bearer}`,
        'x-forwarded-for': from,
        ...headers,
      },
    });
    const text = await r.text();
    return {
      status: r.status,
      etag: r.headers.get('etag'),
      body: text ? JSON.parse(text) : null,
    };
  };
  const randomKey = () => `sgs_${crypto.randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

  beforeAll(async () => {
    w = await seedAddinWorld(api.t.ctx, api.ws);
  });
  afterAll(async () => w?.emulator.close());

  it('counts 401s of random keys against the address, and past the limit answers 429 without looking the key up', async () => {
    const { pool } = api.t.ctx;
    let lookups = 0;
    const query = pool.query;
    pool.query = function (this: typeof pool, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
      if (text?.includes('from api_keys')) lookups++;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof pool.query;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await get('bob@acme.test', randomKey(), '198.51.100.7')).status);
      console.log(
        `12 random add-in keys from one address (RATE_LIMIT_AUTH_FAILURES ${FAILURES}): statuses ${JSON.stringify(statuses)}, key lookups ${lookups}`,
      );
      expect(statuses).toEqual([...Array<number>(FAILURES).fill(401), ...Array<number>(12 - FAILURES).fill(429)]);
      expect(lookups).toBe(FAILURES);
      // A refused Entra token counts the same way.
      const tokens: number[] = [];
      for (let i = 0; i <= FAILURES; i++) tokens.push((await get('bob@acme.test', 'eyJhbGciOiJub25lIn0.eyJ0aWQiOiJ4In0.', '198.51.100.9')).status);
      expect(tokens).toEqual([...Array<number>(FAILURES).fill(401), 429]);
      // The address is limited, not the key: a good key from there waits as well; another address is not limited.
      const key = (await createApiKey(pool, api.ws, 'after-failures', 'addin')).key;
      expect((await get('bob@acme.test', key, '198.51.100.7')).status).toBe(429);
      expect((await get('bob@acme.test', randomKey(), '198.51.100.8')).status).toBe(401);
      expect((await get('bob@acme.test', key, '198.51.100.8')).status).toBe(200);
    } finally {
      pool.query = query;
    }
  });

  it('key-only mode: one key holder exhausts only their own mailbox and address, not everyone holding the key', async () => {
    const key = (await createApiKey(api.t.ctx.pool, api.ws, 'shared-by-everyone', 'addin')).key;
    const attacker = '203.0.113.66';
    const flood: number[] = [];
    for (let i = 0; i < PER_MAILBOX + 2; i++) flood.push((await get('bob@acme.test', key, attacker)).status);
    console.log(`key-only flood of one mailbox from one address (RATE_LIMIT_ADDIN ${PER_MAILBOX}): statuses ${JSON.stringify(flood)}`);
    expect(flood).toEqual([...Array<number>(PER_MAILBOX).fill(200), 429, 429]);
    // Bob composing from his own network, and Ann from the attacker's, still get their signatures.
    expect((await get('bob@acme.test', key, '203.0.113.10')).status).toBe(200);
    expect((await get('ann@acme.test', key, attacker)).status).toBe(200);

    // Going round mailboxes does not lift the limit: ten times the per-mailbox limit per address across them.
    const rover = '203.0.113.99';
    const statuses: number[] = [];
    for (let i = 0; i <= PER_MAILBOX * 10; i++) statuses.push((await get(`nobody-${i}@acme.test`, key, rover)).status);
    expect(statuses.slice(0, PER_MAILBOX * 10).every((s) => s === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    expect((await get('bob@acme.test', key, '203.0.113.11')).status).toBe(200);
  });

  it('If-None-Match: * answers the signature (200), so a client that claims it holds "anything" is not recorded as current without it', async () => {
    const { pool } = api.t.ctx;
    const key = (await createApiKey(pool, api.ws, 'conditional', 'addin')).key;
    await pool.query(`delete from addin_clients where email_id = $1`, [w.ann.emailIds[0]]);
    forgetRecordedFetches(api.t.ctx);
    const star = await get('ann@acme.test', key, '203.0.113.20', { 'if-none-match': '*' }, '&platform=ios&client_version=spoof');
    console.log(`If-None-Match: * with platform=ios&client_version=spoof: status ${star.status}, html sent ${typeof star.body?.data?.html === 'string'}`);
    expect(star.status).toBe(200);
    expect(star.body.data.html).toContain('Regards from Acme');
    // Only the current ETag itself answers 304.
    expect(
      (
        await get('ann@acme.test', key, '203.0.113.20', {
          'if-none-match': star.etag!,
        })
      ).status,
    ).toBe(304);
    expect(
      (
        await get('ann@acme.test', key, '203.0.113.20', {
          'if-none-match': `"old", *`,
        })
      ).status,
    ).toBe(200);
  });
});
