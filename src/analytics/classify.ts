/**
 * Who made a click or a view: every raw row is classified as it is recorded, from the request alone
 * (no request leaves the machine), and keeps its class, its reasons and its network's ASN and owner;
 * never the address (docs/analytics.md, "Who clicked: people and machines").
 *
 * - `scanner`: a security gateway or another machine checking the link or the image: method HEAD, a
 *   bot or headless browser user agent (`isbot`), a gateway's network (Microsoft's for Defender Safe
 *   Links, Proofpoint, Mimecast, Barracuda), a click from a mail provider's network, a link-scanner
 *   burst (bots.ts), a click within seconds of the same address fetching the signature's image.
 * - `proxy`: a fetch a mail service makes for a reader or at delivery (Gmail's image proxy, Apple Mail
 *   Privacy Protection, Yahoo, Microsoft's servers for Outlook), and the compose window's own fetch of
 *   the signature's images (the sender writing, not a person reading; Outlook on the web's or the
 *   service's own pages as Referer).
 * - `unknown`: nothing says machine for sure, but something is off: a cloud provider's network
 *   (a VPN, a cloud desktop or a scanner hosted there).
 * - `human`: none of the above. A gateway's page as Referer is kept as a reason but decides nothing:
 *   the gateway's own checks come from its network (a `scanner` above), and a browser that arrives
 *   from that page on an ordinary network is a person who passed through it.
 */
import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import { networkOf, type Network } from './networks.ts';
import { proxyOf } from './proxies.ts';

export type TrafficClass = 'human' | 'scanner' | 'proxy' | 'unknown';
export const TRAFFIC_CLASSES: readonly TrafficClass[] = ['human', 'scanner', 'proxy', 'unknown'];

export interface Classified {
  class: TrafficClass;
  /** Why, in the order found: `head_request`, `bot_user_agent`, `proxy_user_agent`, `network:<owner>`, … */
  reasons: string[];
  asn: number | null;
  org: string | null;
}

export interface RequestSignals {
  method: string;
  userAgent: string | undefined;
  referer: string | undefined;
  ip: string;
}

/** Owners by ASN (from the data set's names; `npm run bench -- classify` checks them on real ranges). */
const OWNERS = new Map<number, string>([
  ...[8075, 8068, 8069, 12076].map((a) => [a, 'microsoft'] as const),
  ...[15169, 36040, 19527].map((a) => [a, 'google'] as const),
  ...[714, 6185].map((a) => [a, 'apple'] as const),
  ...[26211, 22843, 13916, 52129].map((a) => [a, 'proofpoint'] as const),
  ...[30031, 33538, 397726, 42427, 39588, 60492, 208638, 37235, 136792].map((a) => [a, 'mimecast'] as const),
  ...[15324].map((a) => [a, 'barracuda'] as const),
  ...[36646, 36647, 26101, 10310, 34010, 36752, 14776, 14777, 14778, 14779, 14780, 7280, 5779, 43428, 203220].map((a) => [a, 'yahoo'] as const),
  // Cloud providers: Amazon, Google Cloud, DigitalOcean, OVH, Hetzner, Linode, Oracle, Alibaba, Vultr, Scaleway, Tencent.
  ...[16509, 14618, 8987, 396982, 14061, 16276, 24940, 63949, 31898, 45102, 20473, 12876, 132203].map((a) => [a, 'cloud'] as const),
]);

/** Security gateways: a click from their networks is their link check. */
const GATEWAYS = new Set(['microsoft', 'proofpoint', 'mimecast', 'barracuda']);
/** Mail providers whose servers fetch images for their readers. */
const MAIL_PROXIES = new Set(['google', 'apple', 'yahoo', 'microsoft']);

/** Hosts of the gateways' link-rewriting and time-of-click pages. */
const GATEWAY_REFERRERS =
  /(^|\.)(safelinks\.protection\.outlook\.com|urldefense\.com|urldefense\.proofpoint\.com|linkprotect\.cudasvc\.com|mimecast\.com|mimecastprotect\.com)$/i;
/** Outlook on the web's compose window: the sender's own browser shows the signature it inserted. */
const OUTLOOK_WEB = /^(outlook\.office\.com|outlook\.office365\.com|outlook\.live\.com|outlook\.cloud\.microsoft)$/i;

const agents = new LRUCache<string, { bot: boolean }>({ max: 10_000 });

function botAgent(userAgent: string): boolean {
  if (userAgent.length > 512) return isbot(userAgent) || /Headless/i.test(userAgent);
  let known = agents.get(userAgent);
  if (!known) agents.set(userAgent, (known = { bot: isbot(userAgent) || /Headless/i.test(userAgent) }));
  return known.bot;
}

function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * What the request carries about its client: each signal with the class it points to and its weight
 * (the heaviest decides). On a view, a proxy's user agent or a compose window outweighs a bot user
 * agent (the proxy's fetch is what it is), and the request outweighs its network.
 */
function signals(kind: 'click' | 'view', req: RequestSignals, ownHost: string | null, owner: string | null): [TrafficClass, string, number][] {
  const out: [TrafficClass, string, number][] = [];
  const view = kind === 'view';
  if (req.method === 'HEAD') out.push(['scanner', 'head_request', 5]);
  const proxy = proxyOf(req.userAgent);
  if (proxy) out.push(['proxy', `proxy_user_agent:${proxy}`, view ? 4 : 2]);
  else if (!req.userAgent) out.push(['scanner', 'no_user_agent', 3]);
  else if (botAgent(req.userAgent)) out.push(['scanner', 'bot_user_agent', 3]);
  const referrer = hostOf(req.referer);
  if (referrer && view && (referrer === ownHost || OUTLOOK_WEB.test(referrer))) out.push(['proxy', 'compose_window', 4]);
  if (referrer && GATEWAY_REFERRERS.test(referrer)) out.push(['human', `gateway_referrer:${referrer}`, 0]);
  if (owner === 'cloud') out.push(['unknown', 'network:cloud', 1]);
  else if (owner && !view && (GATEWAYS.has(owner) || MAIL_PROXIES.has(owner))) out.push(['scanner', `network:${owner}`, 3]);
  else if (owner && view && MAIL_PROXIES.has(owner)) out.push(['proxy', `network:${owner}`, 2]);
  else if (owner && view && GATEWAYS.has(owner)) out.push(['scanner', `network:${owner}`, 2]);
  return out;
}

/**
 * The class of one click or view from its request. `ownOrigin` is the service's public origin: a
 * view whose Referer is one of the service's own pages (the console, the compose-window demo) is
 * a preview, not a reader.
 */
export function classifyRequest(kind: 'click' | 'view', req: RequestSignals, ownOrigin?: string): Classified {
  const network: Network | null = networkOf(req.ip);
  const owner = network ? (OWNERS.get(network.asn) ?? null) : null;
  const found = signals(kind, req, hostOf(ownOrigin), owner);
  let chosen: TrafficClass = 'human';
  let weight = 0;
  for (const [c, , w] of found) if (w > weight) [chosen, weight] = [c, w];
  return { class: chosen, reasons: found.map(([, r]) => r), asn: network?.asn ?? null, org: network?.org ?? null };
}

/**
 * The time pattern: an address whose fetch of a signature's tracked image was a scanner's and that follows one of its links within TIME_PATTERN_MS is a
 * scanner opening the message
 * and every link in one go, even with an ordinary browser's user agent on the click. A person's own
 * view, or a proxy's on a person's behalf, is not noted: a quick reader is not a machine. Keyed by the keyed hash of the address and
 * the sender's address; held one minute.
 */
export const TIME_PATTERN_MS = 2000;
const recentViews = new LRUCache<string, number>({ max: 100_000, ttl: 60_000 });

export function noteView(address: string, emailId: string, at: number): void {
  recentViews.set(`${address}|${emailId}`, at);
}

/** Whether the address fetched the sender's image within TIME_PATTERN_MS before `at`. */
export function soonAfterView(address: string, emailId: string, at: number): boolean {
  const seen = recentViews.get(`${address}|${emailId}`);
  return seen !== undefined && at - seen >= 0 && at - seen < TIME_PATTERN_MS;
}

/** A click's class with the time pattern added. */
export function withTimePattern(c: Classified, soon: boolean): Classified {
  if (!soon) return c;
  return { ...c, class: c.class === 'human' || c.class === 'unknown' ? 'scanner' : c.class, reasons: [...c.reasons, 'soon_after_view'] };
}

/** The `bot_reason` of a machine's row, as the names were before classes (kept for the rows' readers). */
export function legacyReason(reasons: string[]): string {
  const first = reasons[0] ?? 'user_agent';
  if (first.startsWith('proxy_user_agent')) return 'image_proxy';
  if (first === 'bot_user_agent' || first === 'no_user_agent') return 'user_agent';
  return first;
}
