import { describe, expect, it } from 'vitest';
import { UnsafeUrlError, checkUrlSyntax, classifyAddress, validateWebhookUrl } from '../../src/net/ssrf.ts';
import { parseEventTypes, UnknownEventTypeError } from '../../src/webhooks/endpoints.ts';
import { classifyStatus, nextDelayMs, DEFAULT_POLICY, RETRY_DELAYS_MS } from '../../src/webhooks/delivery.ts';
import { EVENT_TYPES } from '../../src/db/outbox.ts';

const secure = { allowInsecure: false };
const insecure = { allowInsecure: true };

function refusal(fn: () => unknown): UnsafeUrlError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(UnsafeUrlError);
    return e as UnsafeUrlError;
  }
  throw new Error('expected an UnsafeUrlError');
}

describe('webhook URL guard', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'reserved'],
    ['100.64.0.1', 'private'],
    ['0.0.0.0', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'reserved'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'reserved'],
    ['64:ff9b::a00:1', 'reserved'],
    ['172.32.0.1', 'public'],
    // IPv6 forms that embed an IPv4 address: only IPv4-mapped is judged by the address inside.
    ['::127.0.0.1', 'reserved'],
    ['::7f00:1', 'reserved'],
    ['::10.0.0.1', 'reserved'],
    ['::8.8.8.8', 'reserved'],
    ['::ffff:0:127.0.0.1', 'reserved'],
    ['::ffff:0:7f00:1', 'reserved'],
    ['2002:7f00:1::1', 'reserved'],
    ['2001:0:7f00:1::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['fe80::1%eth0', 'reserved'],
    ['1::1', 'reserved'],
  ])('classifies %s as %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
  });

  it('accepts an https URL on a public address', () => {
    expect(checkUrlSyntax('https://93.184.215.14/hooks?x=1', secure).toString()).toBe('https://93.184.215.14/hooks?x=1');
  });

  it('refuses http, other schemes and credentials, whatever ALLOW_INSECURE_OUTBOUND_URLS says for public hosts', () => {
    expect(refusal(() => checkUrlSyntax('http://93.184.215.14/', secure)).message).toMatch(/must use https/);
    expect(refusal(() => checkUrlSyntax('http://93.184.215.14/', insecure)).message).toMatch(/http is allowed only for a loopback host/);
    expect(refusal(() => checkUrlSyntax('ftp://93.184.215.14/', insecure)).message).toMatch(/must use https/);
    expect(refusal(() => checkUrlSyntax('https://user:pw@93.184.215.14/', secure)).message).toMatch(/user name or password/);
    expect(refusal(() => checkUrlSyntax('not a url', secure)).message).toMatch(/not an absolute URL/);
  });

  it('refuses private, link-local and reserved literals even with ALLOW_INSECURE_OUTBOUND_URLS', () => {
    for (const url of [
      'https://10.0.0.5/',
      'https://169.254.169.254/latest/meta-data',
      'https://[fd00::1]/',
      'https://0.0.0.0/',
      'https://[::ffff:192.168.0.1]/',
    ]) {
      expect(refusal(() => checkUrlSyntax(url, insecure)).message).toMatch(/private, link-local or reserved/);
    }
    // Numeric forms are normalised by the URL parser before the check: 0xA9FEA9FE is 169.254.169.254.
    expect(refusal(() => checkUrlSyntax('https://0xA9FEA9FE/', insecure)).message).toMatch(/169\.254\.169\.254/);
  });

  it('allows loopback (and http to loopback) only with ALLOW_INSECURE_OUTBOUND_URLS', () => {
    expect(refusal(() => checkUrlSyntax('https://127.0.0.1/', secure)).message).toMatch(/loopback.*ALLOW_INSECURE_OUTBOUND_URLS/);
    expect(refusal(() => checkUrlSyntax('http://127.0.0.1:8080/', secure)).message).toMatch(/must use https/);
    expect(refusal(() => checkUrlSyntax('https://localhost/', secure)).message).toMatch(/loopback/);
    expect(checkUrlSyntax('http://127.0.0.1:8080/hook', insecure).port).toBe('8080');
    expect(checkUrlSyntax('http://[::1]:8080/hook', insecure).hostname).toBe('[::1]');
    expect(checkUrlSyntax('http://localhost:8080/hook', insecure).hostname).toBe('localhost');
  });

  it('resolves host names at add time and refuses one that resolves to loopback unless allowed', async () => {
    await expect(validateWebhookUrl('https://localhost./x', secure)).rejects.toThrow(/loopback/);
    await expect(validateWebhookUrl('http://localhost:1/x', insecure)).resolves.toBeInstanceOf(URL);
    await expect(validateWebhookUrl('https://no-such-host.invalid/x', secure)).rejects.toThrow(/does not resolve/);
  });
});

describe('event type subscriptions', () => {
  it('reads "all" or nothing as every type (null), and a list as those types', () => {
    expect(parseEventTypes(undefined)).toBeNull();
    expect(parseEventTypes('all')).toBeNull();
    expect(parseEventTypes('teammate.created, campaign.started,teammate.created')).toEqual(['teammate.created', 'campaign.started']);
  });

  it('refuses unknown types, naming them and listing the allowed ones', () => {
    let caught: unknown;
    try {
      parseEventTypes('teammate.created,teammate.exploded,foo');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(UnknownEventTypeError);
    expect((caught as UnknownEventTypeError).unknown).toEqual(['teammate.exploded', 'foo']);
    expect((caught as UnknownEventTypeError).message).toContain(EVENT_TYPES.join(', '));
  });
});

describe('retry policy', () => {
  it('retries 408, 429, 5xx; fails for good on other 4xx and 3xx; 410 disables', () => {
    expect([200, 204, 299].map(classifyStatus)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect([408, 429, 500, 502, 503, 504].map(classifyStatus)).toEqual(Array(6).fill('retry'));
    expect([301, 400, 401, 403, 404, 422].map(classifyStatus)).toEqual(Array(6).fill('failed'));
    expect(classifyStatus(410)).toBe('gone');
  });

  it('spreads ten attempts over about 24 hours, then gives up', () => {
    const noJitter = { ...DEFAULT_POLICY, jitter: 0 };
    const delays = RETRY_DELAYS_MS.map((_, i) => nextDelayMs(noJitter, i + 1));
    const total = delays.reduce<number>((a, b) => a + b!, 0);
    expect(delays).toHaveLength(9);
    expect(total / 3_600_000).toBeGreaterThan(22);
    expect(total / 3_600_000).toBeLessThan(25);
    expect(nextDelayMs(noJitter, 10)).toBeNull();
    // Jitter only lengthens a wait, by at most its fraction; Retry-After can lengthen it further.
    expect(nextDelayMs(DEFAULT_POLICY, 1, undefined, () => 1)).toBe(5_500);
    expect(nextDelayMs(noJitter, 1, 120_000)).toBe(120_000);
    expect(nextDelayMs(noJitter, 1, 10 * 86_400_000)).toBe(DEFAULT_POLICY.maxRetryAfterMs);
  });
});
