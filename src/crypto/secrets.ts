/**
 * Encryption at rest for provider credentials and webhook secrets: AES-256-GCM under ENCRYPTION_KEY.
 *
 * Stored format (bytea): version(1) | key id(4) | iv(12) | tag(16) | ciphertext. The key id is the
 * first bytes of sha256(key), so a wrong key is reported as such instead of failing on the tag
 * (or, worse, yielding garbage).
 *
 * With no ENCRYPTION_KEY, a key is generated into DATA_DIR/encryption.key on first start (mode 0600).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

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
      throw new DecryptionError(
        'stored secret was encrypted with a different ENCRYPTION_KEY; set the key it was written with, or reconnect the integration',
      );
    }
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, blob.subarray(5, 17));
    decipher.setAuthTag(blob.subarray(17, 33));
    try {
      return Buffer.concat([decipher.update(blob.subarray(33)), decipher.final()]).toString('utf8');
    } catch (cause) {
      throw new DecryptionError('stored secret failed its integrity check', { cause });
    }
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

/** ENCRYPTION_KEY when set; otherwise DATA_DIR/encryption.key, generated on first use. */
export function loadSecrets(opts: { encryptionKey: string | undefined; dataDir: string; logger: Logger }): Secrets {
  if (opts.encryptionKey) return new Secrets(parseKey(opts.encryptionKey));
  const file = path.join(opts.dataDir, 'encryption.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(opts.dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
      opts.logger.warn({ file }, 'generated an encryption key for stored credentials; back it up, or set ENCRYPTION_KEY');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return new Secrets(parseKey(fs.readFileSync(file, 'utf8')));
}
