/**
 * Click tokens are in emails already sent: their format must not change. A token is base64url of
 * the 8-byte big-endian id and the first 10 bytes of HMAC-SHA256 over those 8 bytes; a click id of
 * the id, the second it was issued, 4 random bytes and the MAC of all three. A genuine token is recognised again (kept), a forged
 * one never; the bot verdict of a user agent is the same the first time and every time after.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClickTokens, clickIdIssuedAt } from '../../src/analytics/token.ts';
import { botReason } from '../../src/analytics/bots.ts';

const key = crypto.randomBytes(32);
const mac = (body: Buffer) => crypto.createHmac('sha256', key).update(body).digest().subarray(0, 10);
const be64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
};

describe('click tokens', () => {
  const tokens = new ClickTokens(key);

  it('keeps the token format of links already sent, for small and large ids', () => {
    for (const id of [1n, 4242n, 2n ** 32n + 7n, 2n ** 53n - 1n, 2n ** 63n + 5n]) {
      const expected = Buffer.concat([be64(id), mac(be64(id))]).toString('base64url');
      expect(tokens.sign(id)).toBe(expected);
      expect(tokens.sign(id.toString())).toBe(expected);
      expect(tokens.verify(expected)).toBe(id.toString());
      expect(tokens.verify(expected)).toBe(id.toString()); // kept: the same answer
    }
  });

  it('builds click ids that name their link, the second they were issued, and carry a MAC of link, time and random part', () => {
    const id = tokens.clickId('123456789');
    const raw = Buffer.from(id, 'base64url');
    expect(raw).toHaveLength(26);
    expect(raw.readBigUInt64BE(0)).toBe(123456789n);
    expect(Math.abs(clickIdIssuedAt(id).getTime() - Date.now())).toBeLessThan(2000);
    expect(clickIdIssuedAt(tokens.clickId('1', Date.UTC(2026, 0, 2, 3, 4, 5, 600))).toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(raw.subarray(16).equals(mac(raw.subarray(0, 16)))).toBe(true);
    expect(tokens.verifyClickId(id)).toBe('123456789');
    expect(tokens.clickId('123456789')).not.toBe(id);
  });

  it('refuses a forged token every time, also after the genuine one was kept', () => {
    const genuine = tokens.sign(77n);
    expect(tokens.verify(genuine)).toBe('77');
    const forged = Buffer.concat([be64(77n), crypto.randomBytes(10)]).toString('base64url');
    expect(tokens.verify(forged)).toBeNull();
    expect(tokens.verify(forged)).toBeNull();
    expect(tokens.verify(genuine.slice(0, 23))).toBeNull();
  });
});

describe('bot verdicts by user agent', () => {
  it('gives the same verdict for a user agent seen before', () => {
    const cases: [string, string | undefined, string | null][] = [
      ['GET', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36', null],
      ['GET', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'user_agent'],
      ['GET', 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)', 'image_proxy'],
      ['GET', undefined, 'user_agent'],
      ['HEAD', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36', 'head_request'],
    ];
    for (let round = 0; round < 2; round++) for (const [method, ua, reason] of cases) expect(botReason(method, ua)).toBe(reason);
  });
});
