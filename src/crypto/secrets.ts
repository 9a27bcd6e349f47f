/**
 * Encryption at rest for provider credentials and webhook secrets: AES-256-GCM under ENCRYPTION_KEY.
 *
 * Stored format (bytea): version(1) | key id(4) | iv(12) | tag(16) | ciphertext. The key id is the
 * first bytes of sha256(key), so a wrong key is reported as such instead of failing on the tag
 * (or, worse, yielding garbage).
 *
 * With no ENCRYPTION_KEY and no DATABASE_URL (the embedded database, one host), a key is generated
 * into DATA_DIR/encryption.key on first start (mode 0600). With DATABASE_URL the key is required:
 * processes on several hosts share the database and must share the key (docs/production.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from '../configError.ts';
import { prepareDataDir } from '../dataDir.ts';

const VERSION = 1;

export class DecryptionError extends Error {
  override readonly name = 'DecryptionError';
}

export class Secrets {
  readonly #key: Buffer;
  readonly #keyId: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes');
    this.#key = key;
    this.#keyId = crypto.createHash('sha256').update(key).digest().subarray(0, 4);
  }

  encrypt(plaintext: string): Buffer {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), this.#keyId, iv, cipher.getAuthTag(), body]);
  }

  decrypt(blob: Buffer): string {
    if (blob.length < 33 || blob[0] !== VERSION) throw new DecryptionError('stored secret has an unknown format');
    if (!blob.subarray(1, 5).equals(this.#keyId)) {
      throw new DecryptionError('stored secret was encrypted with a different ENCRYPTION_KEY; set the key it was written with, or reconnect the integration');
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, blob.subarray(5, 17));
    decipher.setAuthTag(blob.subarray(17, 33));
    try {
      return Buffer.concat([decipher.update(blob.subarray(33)), decipher.final()]).toString('utf8');
    } catch (cause) {
      throw new DecryptionError('stored secret failed its integrity check', { cause });
    }
  }

  /** Whether `blob` was encrypted with this key (its key id matches), without decrypting it. */
  ownsCiphertext(blob: Buffer): boolean {
    return blob.length >= 33 && blob[0] === VERSION && blob.subarray(1, 5).equals(this.#keyId);
  }

  /**
   * Names the key without revealing it: 16 bytes of a key derived for this purpose only, in hex.
   * Stored in the database (src/db/deployment.ts) so that a process with another key refuses to start.
   */
  fingerprint(): string {
    return this.deriveKey('key-fingerprint').subarray(0, 16).toString('hex');
  }

  /** A 32-byte key for one purpose (HKDF-SHA256 of ENCRYPTION_KEY), for MACs that must not share the encryption key. */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(crypto.hkdfSync('sha256', this.#key, Buffer.alloc(0), `sigsync:${purpose}`, 32));
  }

  encryptJson(value: unknown): Buffer {
    return this.encrypt(JSON.stringify(value));
  }

  decryptJson<T = unknown>(blob: Buffer): T {
    return JSON.parse(this.decrypt(blob)) as T;
  }
}

export function parseKey(text: string): Buffer {
  const t = text.trim();
  return /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
}

/** The one line a process with DATABASE_URL and no ENCRYPTION_KEY stops with (exit 2). */
export const KEY_REQUIRED =
  'ENCRYPTION_KEY: required with DATABASE_URL (every process of a deployment must use the same key); generate one with `openssl rand -hex 32` and give it to every process (docs/production.md)';

/**
 * ENCRYPTION_KEY when set. Without it: with DATABASE_URL a ConfigError (nothing is written); with the
 * embedded database, DATA_DIR/encryption.key, generated on first use.
 */
export function loadSecrets(opts: { encryptionKey: string | undefined; databaseUrl?: string | undefined; dataDir: string; logger: Logger }): Secrets {
  if (opts.encryptionKey) return new Secrets(parseKey(opts.encryptionKey));
  if (opts.databaseUrl) throw new ConfigError('ENCRYPTION_KEY', '32 bytes as 64 hex characters or 44 base64 characters', KEY_REQUIRED);
  const file = path.join(opts.dataDir, 'encryption.key');
  if (!fs.existsSync(file)) {
    prepareDataDir(opts.dataDir);
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
      opts.logger.warn({ file }, 'generated an encryption key for stored credentials; back it up, or set ENCRYPTION_KEY');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return new Secrets(parseKey(fs.readFileSync(file, 'utf8')));
}
