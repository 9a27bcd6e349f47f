/**
 * Server-side request forgery guard for webhook URLs.
 *
 * Rules (README "Webhooks"):
 * - the URL is https, has no user name or password, and is at most 2048 characters;
 * - every address its host resolves to is public: loopback, private (RFC 1918, unique local),
 *   link-local (which holds cloud metadata services), carrier-grade NAT, multicast, documentation
 *   and other reserved ranges are refused;
 * - with ALLOW_INSECURE_WEBHOOKS on, loopback addresses are allowed, and http is allowed for a
 *   loopback host only (tests, the sandbox).
 *
 * The check runs when an endpoint is added and again at every delivery: `guardedLookup` is the DNS
 * lookup of the delivery's socket, so the address connected to is the address checked (no window for
 * DNS rebinding between check and connect).
 */
import dns from 'node:dns';
import net from 'node:net';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';
}

export type AddressClass = 'public' | 'loopback' | 'private';

export interface UrlPolicy {
  /** ALLOW_INSECURE_WEBHOOKS: loopback allowed, and http to loopback. */
  allowInsecure: boolean;
}

const MAX_URL_LENGTH = 2048;

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Everything that is neither public nor loopback. */
const NON_PUBLIC = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this" network; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128], // unspecified
  ['64:ff9b::', 96], // NAT64, may translate to a private IPv4
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ...)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4, embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(prefix, bits, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:xxxx:xxxx), if it is one. */
function mappedIpv4(address: string): string | undefined {
  const m = /^(?:0{0,4}:){0,5}:?ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!m) return undefined;
  if (m[1]) return m[1];
  const hi = parseInt(m[2]!, 16);
  const lo = parseInt(m[3]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** Classifies an IP address (v4 or v6) as public, loopback or private (anything else non-public). */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 0) throw new UnsafeUrlError(`${address} is not an IP address`);
  if (family === 6) {
    const v4 = mappedIpv4(bare);
    if (v4) return classifyAddress(v4);
    if (LOOPBACK.check(bare, 'ipv6')) return 'loopback';
    return NON_PUBLIC.check(bare, 'ipv6') ? 'private' : 'public';
  }
  if (LOOPBACK.check(bare, 'ipv4')) return 'loopback';
  return NON_PUBLIC.check(bare, 'ipv4') ? 'private' : 'public';
}

/** The host of a parsed URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Names that mean the local host by definition (RFC 6761), without asking DNS. */
function isLocalhostName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

/** Refuses an address the policy does not allow; `requireLoopback` is set for http URLs. */
export function assertAddressAllowed(host: string, address: string, policy: UrlPolicy, requireLoopback = false): void {
  const cls = classifyAddress(address);
  const where = host === address ? address : `${host} resolves to ${address}, which`;
  if (cls === 'private') throw new UnsafeUrlError(`${where} is a private, link-local or reserved address`);
  if (cls === 'loopback' && !policy.allowInsecure) {
    throw new UnsafeUrlError(`${where} is a loopback address (allowed only with ALLOW_INSECURE_WEBHOOKS=1)`);
  }
  if (requireLoopback && cls !== 'loopback') throw new UnsafeUrlError(`${where} is not loopback, and http is allowed only for loopback`);
}

/**
 * The checks that need no DNS: scheme, credentials, length, and the address when the host is an IP
 * literal. Returns the parsed URL.
 */
export function checkUrlSyntax(raw: string, policy: UrlPolicy): URL {
  if (raw.length > MAX_URL_LENGTH) throw new UnsafeUrlError(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(`"${raw}" is not an absolute URL`);
  }
  const host = hostOf(url);
  const loopbackHost = isLocalhostName(host) || (net.isIP(host) !== 0 && classifyAddress(host) === 'loopback');
  if (url.protocol === 'http:') {
    if (!policy.allowInsecure) throw new UnsafeUrlError('the URL must use https');
    if (!loopbackHost) throw new UnsafeUrlError('http is allowed only for a loopback host; use https');
  } else if (url.protocol !== 'https:') {
    throw new UnsafeUrlError('the URL must use https');
  }
  if (url.username || url.password) throw new UnsafeUrlError('the URL must not carry a user name or password');
  if (!host) throw new UnsafeUrlError('the URL has no host');
  if (net.isIP(host) !== 0) assertAddressAllowed(host, host, policy, url.protocol === 'http:');
  else if (isLocalhostName(host) && !policy.allowInsecure) {
    throw new UnsafeUrlError(`${host} is a loopback host (allowed only with ALLOW_INSECURE_WEBHOOKS=1)`);
  }
  return url;
}

/**
 * Resolves every address of a host name and checks them all. A DNS failure is thrown as it is (at
 * delivery it is a network error, worth a retry); a refused address is an UnsafeUrlError.
 */
async function resolveAllowed(host: string, policy: UrlPolicy, requireLoopback: boolean): Promise<dns.LookupAddress[]> {
  const addresses = await dns.promises.lookup(host, { all: true, order: 'verbatim' });
  if (!addresses.length) throw Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' });
  for (const a of addresses) assertAddressAllowed(host, a.address, policy, requireLoopback);
  return addresses;
}

/** The full check for `webhook add`: syntax, then every address the host resolves to. */
export async function validateWebhookUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  const url = checkUrlSyntax(raw, policy);
  const host = hostOf(url);
  if (net.isIP(host) === 0) await resolveAllowed(host, policy, url.protocol === 'http:').catch(rethrowRefusal(host));
  return url;
}

function rethrowRefusal(host: string) {
  return (cause: unknown): never => {
    if (cause instanceof UnsafeUrlError) throw cause;
    throw new UnsafeUrlError(`${host} does not resolve (${(cause as NodeJS.ErrnoException).code ?? 'DNS error'})`, { cause });
  };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request: resolves the host, refuses it unless every address is allowed, and
 * hands the checked addresses to the socket. (Node skips `lookup` for IP literals; `checkUrlSyntax`
 * covers those.)
 */
export function guardedLookup(policy: UrlPolicy, requireLoopback: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolveAllowed(hostname, policy, requireLoopback).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (!wanted.length) {
          callback(Object.assign(new Error(`${hostname} has no IPv${String(options.family)} address`), { code: 'ENOTFOUND' }), '', 0);
        } else if (options.all) {
          callback(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (err: Error) => callback(err, '', 0),
    );
  };
}
