/**
 * HMAC-SHA256 (RFC 2104) for the public routes' hot path: the click and view tokens, click ids and
 * the clients' keyed hashes (token.ts, bots.ts). The same construction and the same output as
 * `crypto.createHmac('sha256', key)`, computed as two one-shot `crypto.hash` calls over the key's
 * padded blocks (SHA-256(K ⊕ opad ‖ SHA-256(K ⊕ ipad ‖ message))), which costs about half of
 * building an Hmac object per message. Messages are written into a scratch buffer kept per key:
 * the calls are synchronous, so no two messages share it at once.
 */
import crypto from 'node:crypto';

const BLOCK = 64;
const DIGEST = 32;
/** Longest message written into the scratch buffer; a longer one gets a buffer of its own. */
const SCRATCH = 1024;

export class HmacSha256 {
  readonly #inner = Buffer.alloc(BLOCK + SCRATCH);
  readonly #outer = Buffer.alloc(BLOCK + DIGEST);

  /** `key`: at most one SHA-256 block (64 bytes); a longer key is hashed first, as HMAC says. */
  constructor(key: Buffer) {
    const k = key.length > BLOCK ? crypto.hash('sha256', key, 'buffer') : key;
    for (let i = 0; i < BLOCK; i++) {
      this.#inner[i] = (k[i] ?? 0) ^ 0x36;
      this.#outer[i] = (k[i] ?? 0) ^ 0x5c;
    }
  }

  /** The MAC of a buffer (32 bytes). */
  digest(message: Buffer): Buffer {
    if (message.length > SCRATCH) return this.#finish(Buffer.concat([this.#inner.subarray(0, BLOCK), message]));
    message.copy(this.#inner, BLOCK);
    return this.#finish(this.#inner.subarray(0, BLOCK + message.length));
  }

  /** The MAC of a string's UTF-8 bytes, in base64url (43 characters). */
  digestText(message: string): string {
    if (Buffer.byteLength(message) > SCRATCH) return this.#finish(Buffer.concat([this.#inner.subarray(0, BLOCK), Buffer.from(message)])).toString('base64url');
    const n = this.#inner.write(message, BLOCK, 'utf8');
    return this.#finish(this.#inner.subarray(0, BLOCK + n)).toString('base64url');
  }

  #finish(innerInput: Buffer): Buffer {
    crypto.hash('sha256', innerInput, 'buffer').copy(this.#outer, BLOCK);
    return crypto.hash('sha256', this.#outer, 'buffer');
  }
}
