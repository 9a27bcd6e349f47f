/**
 * The emulated Microsoft 365 tenant's data: users as Graph holds them, groups (members are user or
 * group ids), mailboxes (OWA.UserOptions entries), and a deterministic generator of any size.
 * The shapes are the connector's raw schemas (connectors/microsoft/schemas.ts).
 */
import type { z } from 'zod';
import type { GraphGroup, GraphUser, StructuredDataEntry } from '../connectors/microsoft/schemas.ts';

/**
 * A user as Graph holds it: the connector's `GraphUser`, with the fields every user has, its
 * mailbox's purpose (mailboxSettings.userPurpose, read apart: `shared` for a shared mailbox, which
 * Entra lists with its account disabled; default `user`), and whether the user has a profile photo
 * (the emulator's own).
 */
export type GraphUserRaw = GraphUser & {
  displayName: string;
  userPrincipalName: string;
  userPurpose?: 'user' | 'shared' | 'room' | 'equipment';
  hasPhoto?: boolean;
};

/** A group (the connector's `GraphGroup`) and the ids of its member users and nested groups. */
export type GraphGroupRaw = z.infer<typeof GraphGroup> & { displayName: string; members: string[] };

/** An OWA.UserOptions entry (the connector's `StructuredDataEntry`) as the mailbox keeps it. */
export type StructuredEntry = StructuredDataEntry & { keyEntry: { type: string; values: string[] }; valueEntry: { type: string; values: string[] } };

export interface MicrosoftTenant {
  tenantId: string;
  clientId: string;
  clientSecret: string;
  users: GraphUserRaw[];
  groups: GraphGroupRaw[];
  /** OWA.UserOptions structuredData per user id (absent: the item was never created). */
  mailboxes: Map<string, StructuredEntry[]>;
  /** Users without an Exchange Online mailbox (404 on the mailbox configuration item). */
  noMailbox: Set<string>;
  /** Users whose mailbox settings Graph will not answer for: the status it answers instead (a 400, a 503). */
  mailboxSettingsErrors?: Map<string, 400 | 503>;
}

const DEPARTMENTS = ['Sales', 'Engineering', 'Marketing', 'Support', 'Finance'];
const TITLES = ['Account Executive', 'Software Engineer', 'Product Marketer', 'Support Specialist', 'Analyst'];

export function microsoftUserId(i: number): string {
  return `0d1e2f30-0000-4000-8000-${String(i).padStart(12, '0')}`;
}

/** A deterministic tenant of `n` users across five departments, each department a group, plus an all-staff group nesting them. */
export function generateMicrosoftTenant(n: number, domain = 'contoso.test'): MicrosoftTenant {
  const users: GraphUserRaw[] = [];
  for (let i = 0; i < n; i++) {
    const d = i % DEPARTMENTS.length;
    const mail = `user${i}@${domain}`;
    users.push({
      id: microsoftUserId(i),
      displayName: `Given${i} Family${i}`,
      givenName: `Given${i}`,
      surname: `Family${i}`,
      jobTitle: TITLES[d]!,
      department: DEPARTMENTS[d]!,
      companyName: 'Contoso',
      mail,
      userPrincipalName: mail,
      businessPhones: [`+1 555 02${String(i % 10000).padStart(4, '0')}`],
      mobilePhone: null,
      officeLocation: null,
      proxyAddresses: [`SMTP:${mail}`],
      accountEnabled: true,
    });
  }
  const groups: GraphGroupRaw[] = DEPARTMENTS.map((dep, d) => ({
    id: `9a000000-0000-4000-8000-00000000000${d}`,
    displayName: dep,
    mail: `${dep.toLowerCase()}@${domain}`,
    members: users.filter((_, i) => i % DEPARTMENTS.length === d).map((u) => u.id),
  }));
  groups.push({ id: '9a000000-0000-4000-8000-0000000000ff', displayName: 'All staff', mail: `all@${domain}`, members: groups.map((g) => g.id) });
  return {
    tenantId: 'b7c1d5e2-0000-4000-8000-00000000ac3e',
    clientId: '6731de76-14a6-49ae-97bc-6eba6914391e',
    clientSecret: 'sandbox-client-secret',
    users,
    groups,
    mailboxes: new Map(),
    noMailbox: new Set(),
  };
}

/** The members of a group, directly or through nested groups: users and the nested groups themselves. */
export function transitiveMembers(
  tenant: MicrosoftTenant,
  groupId: string,
  seen = new Set<string>(),
  userIds = new Set(tenant.users.map((u) => u.id)),
): { id: string; type: string }[] {
  const g = tenant.groups.find((x) => x.id === groupId);
  if (!g || seen.has(groupId)) return [];
  seen.add(groupId);
  const out: { id: string; type: string }[] = [];
  for (const m of g.members) {
    if (tenant.groups.some((x) => x.id === m)) {
      out.push({ id: m, type: '#microsoft.graph.group' });
      out.push(...transitiveMembers(tenant, m, seen, userIds));
    } else if (userIds.has(m)) {
      out.push({ id: m, type: '#microsoft.graph.user' });
    }
  }
  return [...new Map(out.map((o) => [o.id, o])).values()];
}

// Group member sets, rebuilt when a group's member array is replaced or grows.
const memberSets = new WeakMap<string[], { n: number; set: Set<string> }>();
function membersOf(g: GraphGroupRaw): Set<string> {
  const cached = memberSets.get(g.members);
  if (cached && cached.n === g.members.length) return cached.set;
  const set = new Set(g.members);
  memberSets.set(g.members, { n: g.members.length, set });
  return set;
}

/** The groups an object belongs to, directly or through nested groups. */
export function transitiveMemberOf(tenant: MicrosoftTenant, objectId: string): string[] {
  const out = new Set<string>();
  for (const queue = [objectId]; queue.length;) {
    const id = queue.shift()!;
    for (const g of tenant.groups) {
      if (!out.has(g.id) && membersOf(g).has(id)) {
        out.add(g.id);
        queue.push(g.id);
      }
    }
  }
  return [...out];
}

/**
 * transitiveMembers, computed once per group and tenant state instead of once per page: a listing
 * of a large group pages through one list (the users array, its length, and each group's member
 * array and length make the state; a change to any of them computes it again).
 */
export function transitiveMembersCache(tenant: MicrosoftTenant): (groupId: string) => { id: string; type: string }[] {
  let state: { users: GraphUserRaw[]; n: number; members: string[][]; lengths: number[] } | undefined;
  const lists = new Map<string, { id: string; type: string }[]>();
  const unchanged = () =>
    state !== undefined &&
    state.users === tenant.users &&
    state.n === tenant.users.length &&
    state.members.length === tenant.groups.length &&
    tenant.groups.every((g, i) => g.members === state!.members[i] && g.members.length === state!.lengths[i]);
  return (groupId) => {
    if (!unchanged()) {
      lists.clear();
      state = {
        users: tenant.users,
        n: tenant.users.length,
        members: tenant.groups.map((g) => g.members),
        lengths: tenant.groups.map((g) => g.members.length),
      };
    }
    let list = lists.get(groupId);
    if (!list) lists.set(groupId, (list = transitiveMembers(tenant, groupId)));
    return list;
  };
}

/** The properties Graph answers for a user when the request names none. */
export const USER_PROPERTIES = [
  'businessPhones',
  'displayName',
  'givenName',
  'id',
  'jobTitle',
  'mail',
  'mobilePhone',
  'officeLocation',
  'preferredLanguage',
  'surname',
  'userPrincipalName',
] as const;

/** A mailbox's primary address: the SMTP: proxy address, else mail, else the UPN (lowercase). */
export const primaryOf = (u: GraphUserRaw) => (u.proxyAddresses?.find((a) => a.startsWith('SMTP:'))?.slice(5) ?? u.mail ?? u.userPrincipalName).toLowerCase();

/** The properties a request's `$select` names. */
export const selectOf = (url: URL): string[] => {
  const s = url.searchParams.get('$select');
  return s ? s.split(',').map((x) => x.trim()) : [...USER_PROPERTIES];
};

/** A user as Graph answers it for those properties (unset ones null, collections empty). */
export const project = (u: GraphUserRaw, select: string[]) => {
  const out: Record<string, unknown> = { id: u.id };
  for (const p of select)
    if (p !== 'id') out[p] = (u as unknown as Record<string, unknown>)[p] ?? (p === 'businessPhones' || p === 'proxyAddresses' ? [] : null);
  return out;
};
