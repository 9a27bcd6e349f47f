/**
 * Server-side request forgery guard: the one rule for every URL the service calls on someone's
 * behalf. Webhook endpoints (at registration and at each delivery), photo downloads, asset fetches
 * by URL, and the integration config URLs the provider SDKs call (`base_url`, `token_url`,
 * `beta_url`) all go through `assertAddressAllowed`.
 *
 * Rules (README "Webhooks", "Configuration"):
 * - the URL is https, has no user name or password, and is at most 2048 characters;
 * - every address its host resolves to is public: classified by ipaddr.js (a maintained copy of
 *   the IANA special-purpose registries), an IPv4 address is public when its range is `unicast`, an
 *   IPv6 address when its range is `unicast` and it lies in 2000::/3, the only block IANA allocates
 *   global unicast addresses from. So loopback, private (RFC 1918, unique local, carrier-grade NAT),
 *   link-local (which holds cloud metadata services), multicast, documentation and every other
 *   special range are refused, and so is every IPv6 form that embeds an IPv4 address: IPv4-mapped
 *   (::ffff:0:0/96) is judged by the IPv4 address inside, and IPv4-compatible (::/96), IPv4-translated
 *   (::ffff:0:0:0/96), NAT64 (64:ff9b::/96), 6to4 and Teredo are refused whatever they embed;
 * - with `allowInsecure` (ALLOW_INSECURE_OUTBOUND_URLS; tests, the sandbox), loopback addresses are
 *   allowed, and http is allowed for a loopback host only;
 * - with `allowPrivate` (ALLOW_PRIVATE_INTEGRATION_URLS, integration URLs only: sovereign clouds and
 *   on-premises gateways), private addresses are allowed too; link-local and reserved ones never are.
 *
 * Where it runs:
 * - `validateUrl` (registration, `integration connect`): the URL's syntax, then every address its
 *   host resolves to;
 * - `guardedAgent` (delivery, photo and asset fetches): an undici dispatcher whose sockets resolve
 *   through `guardedLookup` (a name resolving to a refused address is never connected to) and whose
 *   connected socket's own remote address is checked again before a byte of the request is sent,
 *   so an IP literal and a DNS answer that changed since registration are judged by the same rule.
 */
import dns from 'node:dns';
import net from 'node:net';
import type tls from 'node:tls';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';

export class UnsafeUrlError extends Error {
  override readonly name = 'UnsafeUrlError';
}

/** `private`: RFC 1918, unique local, carrier-grade NAT; `reserved`: every other non-public range. */
export type AddressClass = 'public' | 'loopback' | 'private' | 'reserved';

export interface UrlPolicy {
  /** ALLOW_INSECURE_OUTBOUND_URLS: loopback allowed, and http to loopback. */
  allowInsecure: boolean;
  /** ALLOW_PRIVATE_INTEGRATION_URLS: private addresses allowed (integration URLs only). */
  allowPrivate?: boolean;
}

/** The policy for URLs that customers give (webhooks, asset source URLs, photos on provider CDNs). */
export const PUBLIC_ONLY: UrlPolicy = { allowInsecure: false };

const MAX_URL_LENGTH = 2048;

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const PRIVATE_RANGES = new Set(['private', 'uniqueLocal', 'carrierGradeNat']);

/** The ipaddr.js range of an address, IPv4-mapped IPv6 addresses read as the IPv4 address inside. */
export function addressRange(address: string): { range: string; cls: AddressClass } {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(bare);
  if (family === 0) throw new UnsafeUrlError(`${address} is not an IP address`);
  // The WHATWG serialisation first (hex groups only): ipaddr.js reads a dotted tail such as
  // ::127.0.0.1 (IPv4-compatible) as if it were ::ffff:127.0.0.1 (IPv4-mapped).
  const canonical = family === 6 ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare;
  const parsed = ipaddr.process(canonical);
  const range = parsed.range();
  let cls: AddressClass;
  if (range === 'loopback') cls = 'loopback';
  else if (PRIVATE_RANGES.has(range)) cls = 'private';
  else if (range !== 'unicast') cls = 'reserved';
  else if (parsed.kind() === 'ipv6' && !(parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) cls = 'reserved';
  else cls = 'public';
  return { range: parsed.kind() === 'ipv6' && range === 'unicast' && cls === 'reserved' ? 'outside 2000::/3' : range, cls };
}

/** Classifies an IP address (v4 or v6): public, loopback, private or reserved. */
export function classifyAddress(address: string): AddressClass {
  return addressRange(address).cls;
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

/**
 * THE rule: refuses an address the policy does not allow. `requireLoopback` is set for http URLs.
 * Every check (registration, the socket's lookup, the connected socket) ends here.
 */
export function assertAddressAllowed(host: string, address: string, policy: UrlPolicy, requireLoopback = false): void {
  const cls = classifyAddress(address);
  const where = host === address ? address : `${host} resolves to ${address}, which`;
  if (cls === 'reserved' || (cls === 'private' && !policy.allowPrivate)) {
    throw new UnsafeUrlError(`${where} is a private, link-local or reserved address`);
  }
  if (cls === 'loopback' && !policy.allowInsecure) {
    throw new UnsafeUrlError(`${where} is a loopback address (allowed only with ALLOW_INSECURE_OUTBOUND_URLS=1)`);
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
    throw new UnsafeUrlError(`"${raw.slice(0, 200)}" is not an absolute URL`);
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
    throw new UnsafeUrlError(`${host} is a loopback host (allowed only with ALLOW_INSECURE_OUTBOUND_URLS=1)`);
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

/** The full check before a URL is stored: syntax, then every address the host resolves to. */
export async function validateUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  const url = checkUrlSyntax(raw, policy);
  const host = hostOf(url);
  if (net.isIP(host) === 0) await resolveAllowed(host, policy, url.protocol === 'http:').catch(rethrowRefusal(host));
  return url;
}

/** `webhook add`: the same check as every other URL. */
export const validateWebhookUrl = validateUrl;

function rethrowRefusal(host: string) {
  return (cause: unknown): never => {
    if (cause instanceof UnsafeUrlError) throw cause;
    throw new UnsafeUrlError(`${host} does not resolve (${(cause as NodeJS.ErrnoException).code ?? 'DNS error'})`, { cause });
  };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for sockets: resolves the host, refuses it unless every address is allowed, and hands
 * the checked addresses to the socket. (Node skips `lookup` for IP literals; `checkUrlSyntax` and
 * the connected-socket check of `guardedAgent` cover those.)
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

/** The UnsafeUrlError behind an error thrown by fetch or undici (it wraps socket errors in `cause`). */
export function refusalOf(err: unknown): UnsafeUrlError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof UnsafeUrlError) return e;
  }
  return undefined;
}

/**
 * An undici dispatcher (for `fetch(url, { dispatcher })` or undici's `request`) whose connections
 * obey the policy: names resolve through `guardedLookup`, and the connected socket's remote address
 * is checked with `assertAddressAllowed` before the connection is handed over, so nothing is sent to
 * a refused address, whether the host was a name or an IP literal. `tlsOptions` adds TLS settings
 * (a private CA).
 */
export function guardedAgent(policy: UrlPolicy, opts: { tlsOptions?: tls.ConnectionOptions; keepAlive?: boolean } = {}): Agent {
  const base = { ...(opts.tlsOptions ?? {}) } as buildConnector.BuildOptions;
  const https = buildConnector({ ...base, lookup: guardedLookup(policy, false) } as buildConnector.BuildOptions);
  const http = buildConnector({ ...base, lookup: guardedLookup(policy, true) } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (options, callback) => {
    const plain = options.protocol === 'http:';
    const host = options.hostname.replace(/^\[|\]$/g, '');
    try {
      // An IP literal is not looked up: judge it before connecting.
      if (net.isIP(host) !== 0) assertAddressAllowed(host, host, policy, plain);
      else if (isLocalhostName(host) && !policy.allowInsecure)
        throw new UnsafeUrlError(`${host} is a loopback host (allowed only with ALLOW_INSECURE_OUTBOUND_URLS=1)`);
    } catch (err) {
      callback(err as Error, null);
      return;
    }
    (plain ? http : https)(options, (err, socket) => {
      if (err || !socket) {
        callback(err ?? new Error('no socket'), null);
        return;
      }
      try {
        // A connected socket knows its peer; one that does not (already closed, or a test's
        // interceptor) was judged by the lookup or the literal check above.
        if (socket.remoteAddress !== undefined) assertAddressAllowed(host, socket.remoteAddress, policy, plain);
      } catch (refused) {
        socket.destroy();
        callback(refused as Error, null);
        return;
      }
      callback(null, socket);
    });
  };
  return new Agent({ connect, ...(opts.keepAlive === false ? { pipelining: 0, keepAliveTimeout: 1, keepAliveMaxTimeout: 1 } : {}) });
}
