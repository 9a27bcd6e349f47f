/**
 * Which clicks are not people.
 *
 * - `user_agent`: the user agent is a known crawler, preview fetcher or tool (`isbot`'s list), or
 *   there is none.
 * - `head_request`: a HEAD request (link checkers; a browser following a link sends GET).
 * - `image_proxy`: the user agent of a mail service's image proxy (proxies.ts), which fetches images
 *   and never follows links for a person.
 * - `link_scanner`: mail-gateway link scanners (Microsoft Defender Safe Links, Mimecast, Proofpoint
 *   and the like) fetch every link of a message within seconds of delivery, often with an ordinary
 *   browser user agent, sometimes a different one per link. One client address (whatever the user
 *   agents) that follows two or more different links of one signature of one address within the
 *   window (3 s) is a scanner, and every click of that burst is flagged. A person clicks one link and
 *   reads the page; two colleagues behind one office address rarely click two links of the same
 *   sender's signature within the same 3 seconds. Clicks already a bot's (by user agent or method)
 *   take no part: a crawler's click beside a person's does not make the person a scanner.
 *
 * Bot clicks are stored and reported apart (`bot_clicks`); they never count as human clicks.
 */
import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';
import type { Secrets } from '../crypto/secrets.ts';
import { HmacSha256 } from './hmac.ts';
import { proxyOf } from './proxies.ts';

export type BotReason = 'user_agent' | 'head_request' | 'link_scanner' | 'image_proxy';

/**
 * What each user agent seen lately is (a few browser versions make most of the traffic), so that
 * `isbot`'s pattern runs once per user agent rather than once per request. Bounded in entries, and
 * a user agent longer than any browser's is judged each time instead of kept.
 */
const agents = new LRUCache<string, { reason: BotReason | null }>({ max: 10_000 });
const KEPT_AGENT_LENGTH = 512;

const judge = (userAgent: string): BotReason | null => (proxyOf(userAgent) ? 'image_proxy' : isbot(userAgent) ? 'user_agent' : null);

/** The reason a single request is a bot's, from what it carries alone; null for a person. */
export function botReason(method: string, userAgent: string | undefined): BotReason | null {
  if (method === 'HEAD') return 'head_request';
  if (!userAgent) return 'user_agent';
  if (userAgent.length > KEPT_AGENT_LENGTH) return judge(userAgent);
  let known = agents.get(userAgent);
  if (!known) agents.set(userAgent, (known = { reason: judge(userAgent) }));
  return known.reason;
}

interface Burst {
  first: number;
  /** The first anchor followed; a second one makes the burst a scanner's. */
  anchor: string;
  scanner: boolean;
  clicks: Flaggable[];
}

/** What a burst changes on a click: its bot flag and its class (classify.ts), with the reason. */
interface Flaggable {
  isBot: boolean;
  botReason: string | null;
  trafficClass?: string;
  reasons?: string[];
}

const flag = (c: Flaggable) => {
  if (!c.isBot) {
    c.isBot = true;
    c.botReason = 'link_scanner';
    c.trafficClass = 'scanner';
    c.reasons = [...(c.reasons ?? []), 'all_links_burst'];
  }
};

/** Finds link-scanner bursts among recent clicks (held in memory for the window). */
export class ScannerDetector {
  readonly #windowMs: number;
  readonly #bursts = new Map<string, Burst>();

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  observe(click: Flaggable & { clicker: string; address?: string; emailId: string; signatureId: string; anchorId: string; clickedAt: Date }): void {
    // A click already a bot's (its user agent, HEAD) is one already: it makes no one else a scanner.
    if (click.isBot) return;
    const key = `${click.address ?? click.clicker}|${click.emailId}|${click.signatureId}`;
    const at = click.clickedAt.getTime();
    let burst = this.#bursts.get(key);
    if (!burst || at - burst.first > this.#windowMs) {
      burst = { first: at, anchor: click.anchorId, scanner: false, clicks: [] };
      this.#bursts.set(key, burst);
    }
    if (burst.scanner) return flag(click);
    burst.clicks.push(click);
    if (click.anchorId === burst.anchor) return;
    // The burst becomes a scanner's: its clicks so far are flagged once, later ones as they come.
    burst.scanner = true;
    burst.clicks.forEach(flag);
    burst.clicks = [];
  }

  /** Drops bursts that started before `before` (epoch ms): their clicks are written. */
  forget(before: number): void {
    for (const [key, burst] of this.#bursts) if (burst.first < before) this.#bursts.delete(key);
  }
}

const clientKeys = new WeakMap<Secrets, HmacSha256>();

/** A keyed hash (22 characters: HMAC-SHA256, hmac.ts) of what identifies a client; one key per process, from ENCRYPTION_KEY. */
function keyedHash(secrets: Secrets, text: string): string {
  let key = clientKeys.get(secrets);
  if (!key) clientKeys.set(secrets, (key = new HmacSha256(secrets.deriveKey('clicker'))));
  return key.digestText(text).slice(0, 22);
}

/**
 * The keyed hash of a client's address and user agent that counts unique clickers and viewers;
 * the address itself is never stored.
 */
export function clientHash(secrets: Secrets, ip: string, userAgent: string | undefined): string {
  return keyedHash(secrets, `${ip}\n${userAgent ?? ''}`);
}

/**
 * The keyed hash of a client's address alone (a different text from any `clientHash`): what a
 * client cannot change by sending another user agent. The link-scanner rule and the rollups'
 * rotation rule key on it.
 */
export function addressHash(secrets: Secrets, ip: string): string {
  return keyedHash(secrets, `address\n${ip}`);
}
