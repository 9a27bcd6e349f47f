/**
 * A Directory API user -> DirectoryUser.
 *
 * Flat attribute map (string values; a field that is absent, null or empty leaves its key out, so
 * the engine clears a smart field whose attribute disappeared):
 *
 * | key                                   | from                                                        |
 * |---------------------------------------|-------------------------------------------------------------|
 * | `id`                                  | id                                                          |
 * | `primaryEmail`                        | primaryEmail                                                |
 * | `name.givenName` `name.familyName`    | name.*                                                      |
 * | `name.fullName` `name.displayName`    |                                                             |
 * | `orgUnitPath`                         | orgUnitPath                                                 |
 * | `thumbnailPhotoUrl`                   | thumbnailPhotoUrl                                           |
 * | `organizations.primary.<f>`           | the primary organization (see below)                        |
 * | `organizations.<type>.<f>`            | the first organization of each type                         |
 * |   f = title, department, name, description, costCenter, location, symbol, domain, fullTimeEquivalent |
 * | `phones.primary`, `phones.<type>`     | value (types: work, mobile, work_mobile, home, main, ...)   |
 * | `emails.primary`, `emails.<type>`     | address of the user's listed emails (work, home, other)     |
 * | `addresses.primary.<f>`               | the primary address (see below)                             |
 * | `addresses.<type>.<f>`                | the first address of each type (work, home, other)          |
 * |   f = formatted, streetAddress, extendedAddress, poBox, locality, region, postalCode, country, countryCode |
 * | `externalIds.<type>`                  | value (e.g. `externalIds.organization`: the employee ID)    |
 * | `relations.<type>`                    | value (e.g. `relations.manager`)                            |
 * | `websites.primary`, `websites.<type>` | value                                                       |
 * | `keywords.<type>`                     | value                                                       |
 * | `locations.<type>.<f>`                | f = area, buildingId, floorName, floorSection, deskCode     |
 * | `customSchemas.<Schema>.<Field>`      | the value as text; a multi-valued field joins its values with ", " |
 *
 * A family below `name` (organizations, phones, emails, addresses, externalIds, relations, websites,
 * keywords, locations, customSchemas) is flattened only when a mapped path lies in it (the engine
 * says which, `FetchUsersOptions.attributes`), or always when the caller names none.
 *
 * `<type>` is Google's type, or the customType for `custom` entries; the first entry of a type
 * wins, and untyped entries only count for `primary`. "primary" is the entry Google marks primary,
 * else the first `work` entry, else the first entry. Text is kept as Google has it (unicode and
 * right-to-left names untouched).
 */
import type { DirectoryUser } from '../types.ts';
import type { GoogleUser } from './schemas.ts';

type Attributes = Record<string, string>;

function set(attrs: Attributes, key: string, value: unknown): void {
  if (value === null || value === undefined) return;
  const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
  if (text === undefined || text.trim() === '') return;
  attrs[key] = text;
}

/** Google's type, or the customType of a `custom` entry; undefined for untyped entries. */
function typeOf(item: { type?: string | null; customType?: string | null }): string | undefined {
  if (item.type === 'custom' || !item.type) return item.customType || undefined;
  return item.type;
}

/** The entry marked primary, else the first `work` entry, else the first entry. */
function primaryOf<T extends { primary?: boolean | null; type?: string | null }>(items: readonly T[]): T | undefined {
  return items.find((i) => i.primary === true) ?? items.find((i) => i.type === 'work') ?? items[0];
}

/** First item of each type, in the order Google lists them. */
function firstOfEachType<T extends { type?: string | null; customType?: string | null }>(items: readonly T[]): Map<string, T> {
  const out = new Map<string, T>();
  for (const item of items) {
    const t = typeOf(item);
    if (t !== undefined && !out.has(t)) out.set(t, item);
  }
  return out;
}

const ORG_FIELDS = ['title', 'department', 'name', 'description', 'costCenter', 'location', 'symbol', 'domain', 'fullTimeEquivalent'] as const;
const ADDRESS_FIELDS = ['formatted', 'streetAddress', 'extendedAddress', 'poBox', 'locality', 'region', 'postalCode', 'country', 'countryCode'] as const;
const LOCATION_FIELDS = ['area', 'buildingId', 'floorName', 'floorSection', 'deskCode'] as const;

function setFields<T extends object>(attrs: Attributes, prefix: string, item: T, fields: readonly (keyof T & string)[]): void {
  for (const f of fields) set(attrs, `${prefix}.${f}`, item[f]);
}

function typedValues(
  attrs: Attributes,
  prefix: string,
  items: readonly { value?: string | null; type?: string | null; customType?: string | null; primary?: boolean | null }[] | null | undefined,
  withPrimary: boolean,
): void {
  if (!items?.length) return;
  if (withPrimary) set(attrs, `${prefix}.primary`, primaryOf(items)?.value);
  for (const [t, item] of firstOfEachType(items)) set(attrs, `${prefix}.${t}`, item.value);
}

/** Which attribute families (a lowercase prefix such as `phones.`) to flatten. */
export type FamilyFilter = (prefix: string) => boolean;

/**
 * The families any wanted attribute path lies in (compared without case, as the engine looks
 * attributes up); every family when `wanted` is undefined ("all you can"). Built once per page.
 */
export function familyFilter(wanted: readonly string[] | undefined): FamilyFilter {
  if (wanted === undefined) return () => true;
  const lower = wanted.map((a) => a.toLowerCase());
  return (prefix) => lower.some((a) => a.startsWith(prefix));
}

/**
 * The flat attribute map. With a filter from the paths smart fields map from, the families no
 * wanted path lies in (organizations, phones, addresses, ...) are not flattened: a page costs the
 * mapped fields, not the whole profile.
 */
export function flattenAttributes(u: GoogleUser, want: FamilyFilter = () => true): Attributes {
  const attrs: Attributes = {};
  set(attrs, 'id', u.id);
  set(attrs, 'primaryEmail', u.primaryEmail);
  set(attrs, 'name.givenName', u.name?.givenName);
  set(attrs, 'name.familyName', u.name?.familyName);
  set(attrs, 'name.fullName', u.name?.fullName);
  set(attrs, 'name.displayName', u.name?.displayName);
  set(attrs, 'orgUnitPath', u.orgUnitPath);
  set(attrs, 'thumbnailPhotoUrl', u.thumbnailPhotoUrl);

  if (u.organizations?.length && want('organizations.')) {
    const primary = primaryOf(u.organizations);
    if (primary) setFields(attrs, 'organizations.primary', primary, ORG_FIELDS);
    for (const [t, org] of firstOfEachType(u.organizations)) setFields(attrs, `organizations.${t}`, org, ORG_FIELDS);
  }

  if (want('phones.')) typedValues(attrs, 'phones', u.phones, true);

  if (u.emails?.length && want('emails.')) {
    set(attrs, 'emails.primary', primaryOf(u.emails)?.address);
    for (const [t, e] of firstOfEachType(u.emails)) set(attrs, `emails.${t}`, e.address);
  }

  if (u.addresses?.length && want('addresses.')) {
    const primary = primaryOf(u.addresses);
    if (primary) setFields(attrs, 'addresses.primary', primary, ADDRESS_FIELDS);
    for (const [t, a] of firstOfEachType(u.addresses)) setFields(attrs, `addresses.${t}`, a, ADDRESS_FIELDS);
  }

  if (want('externalids.')) typedValues(attrs, 'externalIds', u.externalIds, false);
  if (want('relations.')) typedValues(attrs, 'relations', u.relations, false);
  if (want('websites.')) typedValues(attrs, 'websites', u.websites, true);
  if (want('keywords.')) typedValues(attrs, 'keywords', u.keywords, false);

  if (u.locations?.length && want('locations.')) {
    for (const [t, l] of firstOfEachType(u.locations)) setFields(attrs, `locations.${t}`, l, LOCATION_FIELDS);
  }

  for (const [schema, fields] of Object.entries(want('customschemas.') ? (u.customSchemas ?? {}) : {})) {
    for (const [field, value] of Object.entries(fields)) {
      const key = `customSchemas.${schema}.${field}`;
      if (Array.isArray(value)) {
        const parts = value.map((v) => (v.value === null || v.value === undefined ? '' : String(v.value))).filter((v) => v.trim() !== '');
        if (parts.length) attrs[key] = parts.join(', ');
      } else {
        set(attrs, key, value);
      }
    }
  }
  return attrs;
}

/** '/Sales/EMEA' -> ['/Sales/EMEA', '/Sales', '/']: the user's org unit and its ancestors, nearest first. */
export function orgUnitChain(path: string | null | undefined): string[] {
  if (!path) return [];
  const parts = path.split('/').filter((p) => p !== '');
  const out: string[] = [];
  for (let i = parts.length; i > 0; i--) out.push(`/${parts.slice(0, i).join('/')}`);
  out.push('/');
  return out;
}

/** Group memberships by user id, and the groups everyone in the account belongs to. */
export interface Memberships {
  byUserId: ReadonlyMap<string, readonly string[]>;
  byEmail: ReadonlyMap<string, readonly string[]>;
  everyone: readonly string[];
}

/** Memberships not loaded yet: a page listed before them has users without groups (groupsPending). */
export const NO_MEMBERSHIPS: Memberships = { byUserId: new Map(), byEmail: new Map(), everyone: [] };

/** A user's groups: by id, by any of its addresses, and the groups of everyone in the account. */
export function groupsOf(userId: string, m: Memberships, emails: readonly string[]): string[] {
  const out = new Set<string>(m.everyone);
  for (const g of m.byUserId.get(userId) ?? []) out.add(g);
  for (const e of emails) for (const g of m.byEmail.get(e.toLowerCase()) ?? []) out.add(g);
  return [...out];
}

export function toDirectoryUser(u: GoogleUser, memberships: Memberships, want?: FamilyFilter): DirectoryUser {
  const primaryEmail = u.primaryEmail?.trim() || null;
  const seen = new Set<string>(primaryEmail ? [primaryEmail.toLowerCase()] : []);
  const aliases: string[] = [];
  for (const a of [...(u.aliases ?? []), ...(u.nonEditableAliases ?? [])]) {
    const key = a.toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      aliases.push(a);
    }
  }
  const givenName = u.name?.givenName || null;
  const familyName = u.name?.familyName || null;
  const displayName = u.name?.displayName || u.name?.fullName || [givenName, familyName].filter(Boolean).join(' ') || primaryEmail || u.id;

  let photo: DirectoryUser['photo'] = null;
  if (u.thumbnailPhotoUrl) {
    photo = { url: u.thumbnailPhotoUrl };
    if (u.thumbnailPhotoEtag) photo.etag = u.thumbnailPhotoEtag;
  }

  return {
    externalId: u.id,
    primaryEmail,
    aliases,
    givenName,
    familyName,
    displayName,
    removed: u.suspended === true || u.archived === true,
    attributes: flattenAttributes(u, want),
    groups: groupsOf(u.id, memberships, [...(primaryEmail ? [primaryEmail] : []), ...aliases]),
    orgUnits: orgUnitChain(u.orgUnitPath),
    photo,
  };
}
