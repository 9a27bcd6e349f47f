/**
 * One Graph user as a clean DirectoryUser.
 *
 * Attribute map (DirectoryUser.attributes; a key is present only when the value is not empty):
 *   displayName, givenName, surname, jobTitle, department, companyName, mail, userPrincipalName,
 *   mobilePhone, officeLocation   the Graph property of the same name
 *   businessPhones.0, .1 ...       each business phone, in Graph's order
 *   phones.work                    businessPhones[0]
 *   phones.mobile                  mobilePhone
 *   extension_<appid>_<name>       each extension attribute named in the config; numbers and booleans
 *                                  as text, multi-valued ones joined with ", "
 *
 * Emails: the `SMTP:` proxy address is the primary (else `mail`); each `smtp:` proxy address is an
 * alias. The user principal name is not used as an address: it often is not a mailbox (e.g.
 * name@tenant.onmicrosoft.com), and users without `mail` or proxy addresses have no mailbox to sign.
 * Such users are returned in `skipped` with reason `no_email`. `accountEnabled: false` is returned
 * as a user with `removed: true`, unless the mailbox is a shared mailbox (Entra lists those as users
 * with the account disabled; `purpose` is their mailboxSettings.userPurpose, read by directory.ts):
 * then it is a user with `sharedMailbox: true`, not removed. Delta's `@removed` (reason `changed` or
 * `deleted`) goes to `removedIds`.

 */
import type { DirectoryUser } from '../types.ts';
import type { GraphUser } from './schemas.ts';

export const USER_PROPERTIES = [
  'id',
  'displayName',
  'givenName',
  'surname',
  'jobTitle',
  'department',
  'companyName',
  'mail',
  'userPrincipalName',
  'businessPhones',
  'mobilePhone',
  'officeLocation',
  'proxyAddresses',
  'accountEnabled',
] as const;

const SIMPLE_ATTRIBUTES = [
  'displayName',
  'givenName',
  'surname',
  'jobTitle',
  'department',
  'companyName',
  'mail',
  'userPrincipalName',
  'mobilePhone',
  'officeLocation',
] as const;

export function text(v: string | null | undefined): string | undefined {
  const t = v?.trim();
  return t ? t : undefined;
}

function extensionValue(v: unknown): string | undefined {
  if (typeof v === 'string') return text(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    const parts = v.map(extensionValue).filter((x): x is string => x !== undefined);
    return parts.length ? parts.join(', ') : undefined;
  }
  return undefined;
}

export type MappedUser = { user: DirectoryUser } | { skipped: { externalId: string; reason: string } };

/** One Graph user as a clean DirectoryUser (see the attribute map at the top of this file). */
export function toDirectoryUser(
  u: GraphUser,
  opts: { baseUrl: string; extensionAttributes: readonly string[]; groups: readonly string[]; purpose?: string | null | undefined },
): MappedUser {
  const proxies = u.proxyAddresses ?? [];
  const primarySmtp = proxies
    .find((p) => p.startsWith('SMTP:'))
    ?.slice(5)
    .trim();
  const primaryEmail = text(primarySmtp) ?? text(u.mail) ?? null;
  const sharedMailbox = u.accountEnabled === false && opts.purpose === 'shared';
  const removed = u.accountEnabled === false && !sharedMailbox;
  if (!primaryEmail && !removed) return { skipped: { externalId: u.id, reason: 'no_email' } };

  const seen = new Set(primaryEmail ? [primaryEmail.toLowerCase()] : []);
  const aliases: string[] = [];
  const candidates = [...proxies.filter((p) => p.startsWith('smtp:')).map((p) => p.slice(5)), u.mail ?? ''];
  for (const c of candidates) {
    const a = c.trim();
    if (a && !seen.has(a.toLowerCase())) {
      seen.add(a.toLowerCase());
      aliases.push(a);
    }
  }

  const attributes: Record<string, string> = {};
  for (const key of SIMPLE_ATTRIBUTES) {
    const v = text(u[key]);
    if (v !== undefined) attributes[key] = v;
  }
  (u.businessPhones ?? []).forEach((p, i) => {
    const v = text(p);
    if (v !== undefined) attributes[`businessPhones.${i}`] = v;
  });
  const work = text(u.businessPhones?.[0]);
  if (work !== undefined) attributes['phones.work'] = work;
  const mobile = text(u.mobilePhone);
  if (mobile !== undefined) attributes['phones.mobile'] = mobile;
  for (const name of opts.extensionAttributes) {
    const v = extensionValue(u[name]);
    if (v !== undefined) attributes[name] = v;
  }

  const givenName = text(u.givenName) ?? null;
  const familyName = text(u.surname) ?? null;
  const displayName = text(u.displayName) ?? ([givenName, familyName].filter(Boolean).join(' ') || primaryEmail || u.id);
  return {
    user: {
      externalId: u.id,
      primaryEmail,
      aliases,
      givenName,
      familyName,
      displayName,
      removed,
      sharedMailbox,
      attributes,
      groups: [...opts.groups],
      orgUnits: [],
      photo: { url: `${opts.baseUrl}/users/${encodeURIComponent(u.id)}/photo/$value` },
    },
  };
}
