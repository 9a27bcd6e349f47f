import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Secrets, DecryptionError, loadSecrets, parseKey } from '../../src/crypto/secrets.ts';
import { createLogger } from '../../src/log.ts';

const key = () => crypto.randomBytes(32);

describe('credential encryption', () => {
  it('round-trips JSON credentials and never stores the plaintext', () => {
    const s = new Secrets(key());
    const creds = { private_key: '-----BEGIN PRIVATE KEY-----abc', client_email: 'svc@x.iam' };
    const blob = s.encryptJson(creds);
    expect(blob.toString('latin1')).not.toContain('BEGIN PRIVATE KEY');
    expect(s.decryptJson(blob)).toEqual(creds);
  });

  it('uses a fresh IV per encryption', () => {
    const s = new Secrets(key());
    expect(s.encrypt('same').equals(s.encrypt('same'))).toBe(false);
  });

  it('reports a wrong key clearly instead of returning garbage', () => {
    const blob = new Secrets(key()).encrypt('secret');
    expect(() => new Secrets(key()).decrypt(blob)).toThrow(DecryptionError);
    expect(() => new Secrets(key()).decrypt(blob)).toThrow(/different ENCRYPTION_KEY/);
  });

  it('detects tampering through the GCM tag', () => {
    const s = new Secrets(key());
    const blob = s.encrypt('secret');
    blob[blob.length - 1]! ^= 1;
    expect(() => s.decrypt(blob)).toThrow(/integrity/);
  });

  it('accepts hex and base64 keys', () => {
    const k = key();
    expect(parseKey(k.toString('hex')).equals(k)).toBe(true);
    expect(parseKey(k.toString('base64')).equals(k)).toBe(true);
  });

  it('generates a key file once (mode 0600) when ENCRYPTION_KEY is unset, and reuses it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-key-'));
    const logger = createLogger('silent');
    const a = loadSecrets({ encryptionKey: undefined, dataDir: dir, logger });
    const file = path.join(dir, 'encryption.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const b = loadSecrets({ encryptionKey: undefined, dataDir: dir, logger });
    expect(b.decrypt(a.encrypt('x'))).toBe('x');
    fs.rmSync(dir, { recursive: true });
  });
});
