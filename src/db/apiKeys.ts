/**
 * API keys: `sgs_` + 32 random base62 characters. Only sha256(key) and a 12-character prefix are
 * stored; the key is shown once when created. Verification finds the row by prefix and compares
 * hashes in constant time.
 */
import crypto from 'node:crypto';
import type { Queryable } from './tx.ts';

const PREFIX_LENGTH = 12;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomToken(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

const hash = (key: string) => crypto.createHash('sha256').update(key).digest();

/** `api` keys call the API; `addin` keys only fetch rendered signatures for the Outlook add-in. */
export type KeyScope = 'api' | 'addin';

export async function createApiKey(
  db: Queryable,
  workspaceId: string,
  name = 'default',
  scope: KeyScope = 'api',
): Promise<{ id: string; key: string; prefix: string }> {
  const key = `sgs_${randomToken(32)}`;
  const prefix = key.slice(0, PREFIX_LENGTH);
  const { rows } = await db.query<{ id: string }>(
    'insert into api_keys (workspace_id, name, prefix, key_hash, scope) values ($1, $2, $3, $4, $5) returning id',
    [workspaceId, name, prefix, hash(key), scope],
  );
  return { id: rows[0]!.id, key, prefix };
}

/**
 * The workspace a key of this scope belongs to, or undefined for a missing, malformed, wrong,
 * revoked or other-scope key.
 */
export async function verifyApiKey(
  db: Queryable,
  key: string,
  scope: KeyScope = 'api',
): Promise<{ workspaceId: string; keyId: string; name: string; prefix: string } | undefined> {
  if (!/^sgs_[A-Za-z0-9]{32}$/.test(key)) return undefined;
  const { rows } = await db.query<{ id: string; workspace_id: string; key_hash: Buffer; scope: KeyScope; name: string }>(
    'select id, workspace_id, key_hash, scope, name from api_keys where prefix = $1 and revoked_at is null',
    [key.slice(0, PREFIX_LENGTH)],
  );
  const row = rows[0];
  if (!row || !crypto.timingSafeEqual(row.key_hash, hash(key)) || row.scope !== scope) return undefined;
  return { workspaceId: row.workspace_id, keyId: row.id, name: row.name, prefix: key.slice(0, PREFIX_LENGTH) };
}
