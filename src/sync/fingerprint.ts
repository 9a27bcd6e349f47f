/**
 * What a directory user contributes, read the same way by the write path: attribute lookup by
 * path, and the fingerprint that tells an unchanged user from a changed one.
 */
import crypto from 'node:crypto';
import type { DirectoryUser } from '../../connectors/types.ts';

/**
 * Everything a directory user contributes to the database, hashed. A user whose fingerprint equals
 * the stored one (and whose teammate is not deleted) is unchanged: the page only records that it was
 * seen. The mapped fields are part of it, so a new or re-mapped smart field rewrites everyone once.
 */
export function fingerprint(u: DirectoryUser, fields: readonly { attribute: string }[], groupIds: ReadonlyMap<string, string>, fieldsSignature: string): string {
  return crypto
    .createHash('sha256')
    .update(
      JSON.stringify([
        fieldsSignature,
        u.displayName,
        u.givenName,
        u.familyName,
        u.primaryEmail,
        [...u.aliases].sort(),
        fields.map((f) => attribute(u, f.attribute) ?? null),
        [...new Set([...u.groups, ...u.orgUnits].map((g) => groupIds.get(g) ?? null))].sort(),
        // Both parts of the photo reference: an unchanged user's teammate_photos row is not rewritten.
        u.photo ? [u.photo.etag ?? null, u.photo.url ?? null] : null,
      ]),
    )
    .digest('base64url');
}

/** Attribute lookup: exact path, then case-insensitive, so `phones.Work` finds `phones.work`. */
export function attribute(user: DirectoryUser, path: string): string | undefined {
  const direct = user.attributes[path];
  if (direct !== undefined) return direct;
  const lower = path.toLowerCase();
  for (const [k, v] of Object.entries(user.attributes)) if (k.toLowerCase() === lower) return v;
  return undefined;
}
