/**
 * Click tokens: the capability in a tracked link `/c/{token}`. A token names one anchor link (an
 * `anchor_links` id: the anchor, signature, teammate and address it was installed for) and carries
 * an HMAC of it, so that a forged, altered or truncated token is refused before any database read
 * and the redirect can only lead to a destination of a published signature.
 *
 * Format: base64url of 8 bytes (the link id, big-endian) and the first 10 bytes of
 * HMAC-SHA256(key, those 8 bytes): 24 characters. The key is derived from ENCRYPTION_KEY for this
 * purpose alone. Same id, same token: rendering stays deterministic.
 *
 * Click ids are built the same way and name their link too: base64url of the link id, the second
 * it was issued (4 bytes, Unix time), 4 random bytes and a 10-byte MAC of all three (35 characters
 * of A-Z a-z 0-9 _ -). A recorded event that carries a click id is attributed from it at once, even
 * before the click itself is written (`clickIdIssuedAt` tells a click just made from one whose row is
 * gone), and a made-up click id is told apart from a genuine one. Click ids issued before the time
 * was in them carry 8 random bytes there: their "time" is noise, almost never within minutes of now.
 *
 * View tokens (`/v/{token}`, the tracked image of an installed signature: viewImages.ts) have the
 * same format over a `view_images` id, with a key of their own: a click token is never a valid view
 * token, nor the reverse.
 */
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Secrets } from '../crypto/secrets.ts';
import { HmacSha256 } from './hmac.ts';

const MAC_BYTES = 10;
/** Genuine tokens kept with the id they name, so that a link followed again is not checked again. */
const VERIFIED_KEPT = 100_000;
const TOKEN = /^[A-Za-z0-9_-]{24}$/;
const CLICK_ID = /^[A-Za-z0-9_-]{34}[AEIMQUYcgkosw048]$/;

/** Random bytes drawn from a 4 KB buffer refilled as needed (one system call per 512 click ids). */
let entropy = Buffer.alloc(0);
let drawn = 0;
function randomInto(target: Buffer, offset: number, length: number): void {
  if (drawn + length > entropy.length) {
    entropy = crypto.randomBytes(4096);
    drawn = 0;
  }
  entropy.copy(target, offset, drawn, drawn + length);
  drawn += length;
}

/** Writes an id (a positive integer below 2^64) as 8 big-endian bytes at the start of `target`. */
function writeId(target: Buffer, id: bigint | string | number): void {
  const n = Number(id);
  if (Number.isSafeInteger(n) && n >= 0) {
    // Two 32-bit halves: no BigInt on the redirect's path (link ids stay far below 2^53).
    target.writeUInt32BE(Math.floor(n / 0x1_0000_0000), 0);
    target.writeUInt32BE(n >>> 0, 4);
  } else {
    target.writeBigUInt64BE(BigInt(id));
  }
}

export class ClickTokens {
  /** HMAC-SHA256 without an Hmac object per message (hmac.ts: on the redirect's path). */
  readonly #hmac: HmacSha256;
  readonly #verified = new LRUCache<string, string>({ max: VERIFIED_KEPT });

  constructor(key: Buffer) {
    this.#hmac = new HmacSha256(key);
  }

  /** HMAC-SHA256 of the body; a token carries its first MAC_BYTES. */
  #mac(body: Buffer): Buffer {
    return this.#hmac.digest(body);
  }

  /** `body ‖ MAC(body)` in base64url. */
  #seal(body: Buffer): string {
    const mac = this.#mac(body);
    const out = Buffer.allocUnsafe(body.length + MAC_BYTES);
    body.copy(out, 0);
    mac.copy(out, body.length, 0, MAC_BYTES);
    return out.toString('base64url');
  }

  sign(linkId: bigint | string | number): string {
    const id = Buffer.allocUnsafe(8);
    writeId(id, linkId);
    return this.#seal(id);
  }

  /** A new click id for a click on this link, issued now (or at `at`, epoch ms). */
  clickId(linkId: bigint | string | number, at = Date.now()): string {
    const body = Buffer.allocUnsafe(16);
    writeId(body, linkId);
    body.writeUInt32BE(Math.floor(at / 1000) >>> 0, 8);
    randomInto(body, 12, 4);
    return this.#seal(body);
  }

  /** The link id a genuine click id names, or null for anything else. */
  verifyClickId(clickId: string): string | null {
    return CLICK_ID.test(clickId) ? this.#open(clickId, 16) : null;
  }

  /**
   * The link id a genuine token names, or null for anything else. A token found genuine is kept
   * (bounded, least recently used first out) with its id, so that the links followed most are
   * checked once; a forged one is checked every time and never kept.
   */
  verify(token: string): string | null {
    const kept = this.#verified.get(token);
    if (kept !== undefined) return kept;
    const id = TOKEN.test(token) ? this.#open(token, 8) : null;
    if (id !== null) this.#verified.set(token, id);
    return id;
  }

  /** The link id in the first 8 bytes of a genuine `body ‖ MAC(body)` of this body length. */
  #open(encoded: string, bodyBytes: number): string | null {
    const raw = Buffer.from(encoded, 'base64url');
    if (raw.length !== bodyBytes + MAC_BYTES) return null;
    const body = raw.subarray(0, bodyBytes);
    if (!crypto.timingSafeEqual(raw.subarray(bodyBytes), this.#mac(body).subarray(0, MAC_BYTES))) return null;
    const n = body.readBigUInt64BE();
    return n > 0n ? n.toString() : null;
  }
}

/** When a click id (one `verifyClickId` found genuine) says it was issued, to the second. */
export function clickIdIssuedAt(clickId: string): Date {
  return new Date(Buffer.from(clickId, 'base64url').readUInt32BE(8) * 1000);
}

const perSecrets = new WeakMap<Secrets, ClickTokens>();
const viewsPerSecrets = new WeakMap<Secrets, ClickTokens>();

/** The process's click tokens, keyed from its ENCRYPTION_KEY. */
export function clickTokens(secrets: Secrets): ClickTokens {
  let t = perSecrets.get(secrets);
  if (!t) perSecrets.set(secrets, (t = new ClickTokens(secrets.deriveKey('click-token'))));
  return t;
}

/** The process's view tokens (same format as click tokens, their own key). */
export function viewTokens(secrets: Secrets): ClickTokens {
  let t = viewsPerSecrets.get(secrets);
  if (!t) viewsPerSecrets.set(secrets, (t = new ClickTokens(secrets.deriveKey('view-token'))));
  return t;
}
