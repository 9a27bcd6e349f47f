/**
 * Directory text made storable, for every connector at once: the engine passes each page's users
 * and the group listing through here before anything is fingerprinted or written.
 *
 * - NUL (U+0000) is removed: Postgres `text` refuses it, so one NUL in one name would fail the
 *   whole page.
 * - Unpaired UTF-16 surrogates are replaced with U+FFFD (what the UTF-8 encoder would write
 *   anyway, made explicit so the fingerprint, the stored row and every later comparison agree).
 * - An address the `emails` table cannot hold (more than 320 characters, or not one `local@domain`
 *   without spaces) is reported on the run: an alias is left out, a user whose primary address it
 *   is is skipped, like a user whose address another teammate holds. One such address used to fail
 *   the whole run, every night.
 *
 * Nothing else changes: markup, bidi controls and long values are stored as the directory has them
 * (they are data; the renderer cleans them, src/text.ts, and escapes them, src/render/escape.ts), so what the API
 * answers is what the directory holds.
 */
import type { DirectoryGroup, DirectoryUser } from '../../connectors/types.ts';
import type { RunErrorDetail } from './write.ts';

/** ES2024 string methods (Node ≥ 20 has them; the TypeScript lib here is ES2023). */
type Es2024String = string & { isWellFormed(): boolean; toWellFormed(): string };

/** The string without NUL and with lone surrogates replaced by U+FFFD; the same string when clean. */
export function cleanText(s: string): string {
  const w = s as Es2024String;
  const wellFormed = w.isWellFormed() ? s : w.toWellFormed();
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', '') : wellFormed;
}

const cleanNullable = (s: string | null): string | null => (s === null ? null : cleanText(s));

/** Whether cleanText leaves the string as it is. */
const isClean = (s: string): boolean => (s as Es2024String).isWellFormed() && !s.includes('\u0000');
const allClean = (list: readonly string[]): boolean => list.every(isClean);

/** Whether cleanDirectoryUser would change nothing (nearly every user: no copy is made then). */
function isCleanUser(u: DirectoryUser): boolean {
  if (!isClean(u.externalId) || !isClean(u.displayName) || !allClean(u.aliases) || !allClean(u.groups) || !allClean(u.orgUnits)) return false;
  for (const s of [u.primaryEmail, u.givenName, u.familyName, u.photo?.url, u.photo?.etag]) if (s != null && !isClean(s)) return false;
  for (const k in u.attributes) if (!isClean(k) || !isClean(u.attributes[k]!)) return false;
  return true;
}

export function cleanDirectoryUser(u: DirectoryUser): DirectoryUser {
  if (isCleanUser(u)) return u;
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(u.attributes)) attributes[cleanText(k)] = cleanText(v);
  const photo = u.photo && {
    ...(u.photo.url !== undefined ? { url: cleanText(u.photo.url) } : {}),
    ...(u.photo.etag !== undefined ? { etag: cleanText(u.photo.etag) } : {}),
  };
  return {
    ...u,
    externalId: cleanText(u.externalId),
    primaryEmail: cleanNullable(u.primaryEmail),
    aliases: u.aliases.map(cleanText),
    givenName: cleanNullable(u.givenName),
    familyName: cleanNullable(u.familyName),
    displayName: cleanText(u.displayName),
    attributes,
    groups: u.groups.map(cleanText),
    orgUnits: u.orgUnits.map(cleanText),
    photo,
  };
}

export function cleanDirectoryGroup(g: DirectoryGroup): DirectoryGroup {
  return {
    ...g,
    externalId: cleanText(g.externalId),
    name: cleanText(g.name),
    ...(g.email !== undefined ? { email: g.email === null ? null : cleanText(g.email) } : {}),
    ...(g.path !== undefined ? { path: g.path === null ? null : cleanText(g.path) } : {}),
  };
}

/** The longest address the `emails` table takes (its check constraint). */
export const MAX_ADDRESS_LENGTH = 320;
const ADDRESS = /^[^@\s]+@[^@\s]+$/;

/** Whether the address, trimmed as it is stored, passes the `emails` check constraint. */
export function storableAddress(address: string): boolean {
  const a = address.trim();
  return a.length <= MAX_ADDRESS_LENGTH && ADDRESS.test(a);
}

const shown = (a: string) => (a.length > 100 ? `${a.slice(0, 100)}…` : a);
const REFUSED = `is not a single address of at most ${MAX_ADDRESS_LENGTH} characters`;

/**
 * A page's users cleaned (cleanDirectoryUser), without the addresses that cannot be stored: such
 * an alias is dropped, a user with such a primary address is left out; each is reported.
 */
export function cleanPageUsers(users: readonly DirectoryUser[]): { users: DirectoryUser[]; errors: RunErrorDetail[] } {
  const out: DirectoryUser[] = [];
  const errors: RunErrorDetail[] = [];
  for (const raw of users) {
    const u = cleanDirectoryUser(raw);
    if (u.removed || !u.primaryEmail) {
      out.push(u);
      continue;
    }
    if (!storableAddress(u.primaryEmail)) {
      errors.push({ externalId: u.externalId, email: shown(u.primaryEmail), message: `email ${shown(u.primaryEmail)} ${REFUSED}; skipped` });
      continue;
    }
    const bad = u.aliases.filter((a) => a.trim() !== '' && !storableAddress(a));
    for (const a of bad) errors.push({ externalId: u.externalId, email: shown(a), message: `alias ${shown(a)} ${REFUSED}; not added` });
    out.push(bad.length ? { ...u, aliases: u.aliases.filter((a) => !bad.includes(a)) } : u);
  }
  return { users: out, errors };
}
