/**
 * The hot path's HMAC-SHA256 (src/analytics/hmac.ts) must be HMAC-SHA256 exactly: tokens and click
 * ids already sent, and the keyed hashes of clients already stored (opt-outs, unique clickers), were
 * made with `crypto.createHmac`. Compared with it for keys shorter than, equal to and longer than a
 * block, messages empty, short, at the scratch buffer's size and past it, UTF-8 text, and a message
 * after a longer one (the scratch buffer is reused).
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacSha256 } from '../../src/analytics/hmac.ts';
import { clientHash, addressHash } from '../../src/analytics/bots.ts';
import { Secrets } from '../../src/crypto/secrets.ts';
import { clientKeys } from '../../src/api/optOut.ts';
import type { AppContext } from '../../src/context.ts';
import type { FastifyRequest } from 'fastify';

const reference = (key: Buffer, message: Buffer | string) => crypto.createHmac('sha256', key).update(message).digest();

describe('HmacSha256', () => {
  it('answers what createHmac answers, for every key and message length', () => {
    for (const keyLength of [0, 16, 32, 63, 64, 65, 200]) {
      const key = crypto.randomBytes(keyLength);
      const hmac = new HmacSha256(key);
      for (const length of [1000, 0, 1, 8, 16, 55, 56, 64, 119, 1023, 1024, 1025, 5000, 3]) {
        const message = crypto.randomBytes(length);
        expect(hmac.digest(message).toString('hex'), `key ${keyLength}, message ${length}`).toBe(reference(key, message).toString('hex'));
      }
    }
  });

  it('hashes text as its UTF-8 bytes, in base64url', () => {
    const key = crypto.randomBytes(32);
    const hmac = new HmacSha256(key);
    for (const text of ['', '127.0.0.1\nMozilla/5.0 (X11; Linux x86_64)', 'address\n::1', 'é中😀\n' + 'x'.repeat(1100), 'short again']) {
      expect(hmac.digestText(text)).toBe(reference(key, Buffer.from(text, 'utf8')).toString('base64url'));
    }
  });

  it('keeps the clients keyed hashes already stored', () => {
    const secrets = new Secrets(crypto.randomBytes(32));
    const key = secrets.deriveKey('clicker');
    const ua = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15';
    expect(clientHash(secrets, '203.0.113.9', ua)).toBe(reference(key, `203.0.113.9\n${ua}`).toString('base64url').slice(0, 22));
    expect(clientHash(secrets, '203.0.113.9', undefined)).toBe(reference(key, '203.0.113.9\n').toString('base64url').slice(0, 22));
    expect(addressHash(secrets, '2001:db8::1')).toBe(reference(key, 'address\n2001:db8::1').toString('base64url').slice(0, 22));
  });
});

describe('clientKeys', () => {
  it('answers the keyed hashes of this address and user agent, kept or not', () => {
    const secrets = new Secrets(crypto.randomBytes(32));
    const app = { secrets } as AppContext;
    const req = (ip: string, ua?: string) => ({ ip, headers: ua === undefined ? {} : { 'user-agent': ua } }) as FastifyRequest;
    for (let round = 0; round < 2; round++) {
      for (const [ip, ua] of [
        ['203.0.113.9', 'UA one'],
        ['203.0.113.9', 'UA two'],
        ['198.51.100.7', 'UA one'],
        ['198.51.100.7', undefined],
        ['198.51.100.7', ''],
      ] as const) {
        expect(clientKeys(app, req(ip, ua)), `${ip} ${ua} (round ${round})`).toEqual({
          browser: clientHash(secrets, ip, ua),
          address: addressHash(secrets, ip),
        });
      }
    }
  });
});
