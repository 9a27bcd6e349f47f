/**
 * The sandbox's emulated tenants: "Acme" on Google Workspace, Microsoft 365 and Slack, built from
 * the people of fixtures/sandbox/acme.json (part on Google, part on Microsoft, all of them in
 * Slack), and its Stripe account. The first-run demo (src/sandbox/) loads this module at run time
 * (src/sandbox/tenants.ts) and sees it through `SandboxTenants`; tests use it whole.
 *
 * Besides the emulators it answers what the demo's control surface shows and changes: the state
 * of every mailbox and DM (`state`), and changes to the directory (`changeDirectory`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startGoogleEmulator, type GoogleEmulator, type GoogleTenant, type GoogleUserRaw } from './google.ts';
import { defaultKnobs } from './http.ts';
import {
  microsoftCredentials,
  microsoftIntegrationConfig,
  startMicrosoftEmulator,
  type GraphUserRaw,
  type MicrosoftEmulator,
  type MicrosoftTenant,
} from './microsoft.ts';
import { startSlackEmulator, type SlackEmulator, type SlackMemberRaw, type SlackTenant } from './slack.ts';
import { generateStripeAccount, startStripeEmulator, type StripeEmulator } from './stripe.ts';

/** One person of the fixture's directory. */
export interface AcmePerson {
  given_name: string;
  family_name: string;
  title: string;
  department: string;
  email: string;
  phone: string;
  provider: 'google' | 'microsoft';
  no_mailbox?: boolean;
}

/** A shared mailbox of the Microsoft 365 tenant: several people send as it; it is nobody's account. */
export interface AcmeSharedMailbox {
  name: string;
  title: string;
  department: string;
  email: string;
  phone: string;
}

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/sandbox/acme.json');
const readFixture = () => JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as { people: AcmePerson[]; shared_mailboxes?: AcmeSharedMailbox[] };

/** The people of fixtures/sandbox/acme.json. */
export function acmePeople(): AcmePerson[] {
  return readFixture().people;
}

/** The shared mailboxes of fixtures/sandbox/acme.json (Microsoft 365). */
export function acmeSharedMailboxes(): AcmeSharedMailbox[] {
  return readFixture().shared_mailboxes ?? [];
}

const googleId = (i: number) => String(200000000000000000000n + BigInt(i));
const slackId = (i: number) => `U0ACME${String(i).padStart(4, '0')}`;

export function googleUserOf(p: AcmePerson, i: number): GoogleUserRaw {
  return {
    id: googleId(i),
    primaryEmail: p.email,
    name: { givenName: p.given_name, familyName: p.family_name, fullName: `${p.given_name} ${p.family_name}` },
    suspended: false,
    archived: false,
    aliases: [],
    orgUnitPath: `/${p.department}`,
    organizations: [{ title: p.title, department: p.department, primary: true }],
    phones: [{ value: p.phone, type: 'work', primary: true }],
  };
}

export function microsoftUserOf(p: AcmePerson, i: number): GraphUserRaw {
  return {
    id: `ac3e0000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    displayName: `${p.given_name} ${p.family_name}`,
    givenName: p.given_name,
    surname: p.family_name,
    jobTitle: p.title,
    department: p.department,
    companyName: 'Acme Europe',
    mail: p.email,
    userPrincipalName: p.email,
    businessPhones: [p.phone],
    mobilePhone: null,
    officeLocation: null,
    proxyAddresses: [`SMTP:${p.email}`],
    accountEnabled: true,
  };
}

/** A shared mailbox as Entra lists it: a user with the account disabled, its mailbox's purpose `shared`. */
export function microsoftSharedMailboxOf(m: AcmeSharedMailbox, i: number): GraphUserRaw {
  const u = microsoftUserOf({ ...m, given_name: '', family_name: '', provider: 'microsoft' }, i);
  return {
    ...u,
    id: `ac3e5a5a-0000-4000-8000-${String(i).padStart(12, '0')}`,
    displayName: m.name,
    givenName: null,
    surname: null,
    accountEnabled: false,
    userPurpose: 'shared',
  };
}

export function slackMemberOf(p: AcmePerson, i: number): SlackMemberRaw {
  const real = `${p.given_name} ${p.family_name}`;
  return {
    id: slackId(i),
    name: p.email.split('@')[0]!,
    real_name: real,
    profile: {
      real_name: real,
      display_name: p.given_name,
      first_name: p.given_name,
      last_name: p.family_name,
      title: p.title,
      phone: p.phone,
      email: p.email,
    },
  };
}

export interface AcmeTenants {
  google: GoogleTenant;
  microsoft: MicrosoftTenant;
  slack: SlackTenant;
  /** How many signed mailboxes the directory starts with (people and shared mailboxes): the seats of the Stripe subscription. */
  people: number;
}

/** The three tenants of the fixture's people. */
export function acmeTenants(people: AcmePerson[] = acmePeople(), shared: AcmeSharedMailbox[] = acmeSharedMailboxes()): AcmeTenants {
  const numbered = people.map((p, i) => ({ p, i }));
  const gUsers = numbered.filter(({ p }) => p.provider === 'google').map(({ p, i }) => googleUserOf(p, i));
  const mUsers = numbered.filter(({ p }) => p.provider === 'microsoft').map(({ p, i }) => microsoftUserOf(p, i));
  // Shared mailboxes are in the all-staff group too, so the assigned signature reaches them.
  mUsers.push(...shared.map((m, i) => microsoftSharedMailboxOf(m, i)));
  const departments = [...new Set(people.map((p) => p.department))];
  const google: GoogleTenant = {
    users: gUsers,
    groups: [{ id: 'acme-everyone', email: 'everyone@acme.test', name: 'Everyone', members: gUsers.map((u) => u.id) }],
    orgUnits: departments.map((d, i) => ({ orgUnitPath: `/${d}`, name: d, orgUnitId: `id:acme${i}`, parentOrgUnitPath: '/' })),
    sendAs: new Map(),
    noMailbox: new Set(people.filter((p) => p.provider === 'google' && p.no_mailbox).map((p) => p.email.toLowerCase())),
  };
  const microsoft: MicrosoftTenant = {
    tenantId: 'ac3e0000-7e4a-4000-8000-00000000e0e0',
    clientId: '5a4d8b1c-0000-4000-8000-00000000acme',
    clientSecret: 'sandbox~client-secret',
    users: mUsers,
    groups: [{ id: 'ac3e9999-0000-4000-8000-000000000001', displayName: 'All staff EMEA', mail: 'all@eu.acme.test', members: mUsers.map((u) => u.id) }],
    mailboxes: new Map(),
    noMailbox: new Set(),
  };
  const slack: SlackTenant = { teamId: 'T0ACME001', botToken: 'xoxb-0000-acme-sandbox-bot-token', members: numbered.map(({ p, i }) => slackMemberOf(p, i)) };
  return { google, microsoft, slack, people: people.length + shared.length };
}

/** A change to the directory, as the sandbox's control surface takes it (`sigsync sandbox directory ...`). */
export interface AcmeDirectoryChange {
  action: 'add' | 'rename' | 'remove' | 'title';
  email: string;
  name?: string | undefined;
  title?: string | undefined;
  /** For `add`: which directory (default: by the address's domain, eu.acme.test is Microsoft). */
  provider?: 'google' | 'microsoft' | undefined;
}

/** The running emulators of the sandbox. */
export interface AcmeEmulators {
  google: GoogleEmulator;
  microsoft: MicrosoftEmulator;
  slack: SlackEmulator;
  stripe: StripeEmulator;
  /** What the sandbox's integrations are configured with to reach the emulators. */
  connections: {
    google: { config: { base_url: string; token_url: string } };
    microsoft: { config: Record<string, string>; credentials: ReturnType<typeof microsoftCredentials> };
    slack: { config: { base_url: string }; credentials: { bot_token: string } };
  };
  /** Each Gmail and Outlook signature, each Slack DM, request counts and the directory. */
  state(): ReturnType<typeof acmeState>;
  /** Applies a change to the directories (and Slack, which mirrors everyone); answers what it did, throws when it does not apply. */
  changeDirectory(change: AcmeDirectoryChange): string;
  close(): Promise<void>;
}

/** Starts the four emulators, each on a free loopback port. */
export async function startAcmeEmulators(tenants: AcmeTenants = acmeTenants()): Promise<AcmeEmulators> {
  const google = await startGoogleEmulator(tenants.google, defaultKnobs());
  const microsoft = await startMicrosoftEmulator(tenants.microsoft, defaultKnobs());
  const slack = await startSlackEmulator(tenants.slack, defaultKnobs());
  const stripe = await startStripeEmulator(generateStripeAccount(tenants.people));
  const e: AcmeEmulators = {
    google,
    microsoft,
    slack,
    stripe,
    connections: {
      google: { config: { base_url: `${google.url}/`, token_url: `${google.url}/token` } },
      microsoft: { config: microsoftIntegrationConfig(microsoft), credentials: microsoftCredentials(microsoft.tenant) },
      slack: { config: { base_url: `${slack.url}/api/` }, credentials: { bot_token: slack.tenant.botToken } },
    },
    state: () => acmeState(e),
    changeDirectory: (change) => changeDirectory(e, change),
    close: async () => {
      await Promise.all([google.close(), microsoft.close(), slack.close(), stripe.close()]);
    },
  };
  return e;
}

/** What the sandbox's inspection endpoint answers. */
function acmeState(e: Pick<AcmeEmulators, 'google' | 'microsoft' | 'slack'>) {
  return {
    gmail: e.google.signatures(),
    outlook: e.microsoft.signatures(),
    slack_dms: e.slack.dms.map((d) => ({ email: d.email, channel: d.channel, ts: d.ts, text: d.text })),
    requests: { google: e.google.counters, microsoft: e.microsoft.counters, slack: e.slack.counters },
    directory: {
      google: e.google.tenant.users.map((u) => ({ email: u.primaryEmail, name: u.name.fullName ?? undefined, title: u.organizations?.[0]?.title ?? null })),
      microsoft: e.microsoft.tenant.users.map((u) => ({ email: u.mail, name: u.displayName, title: u.jobTitle ?? null })),
    },
  };
}

let added = 100;

function changeDirectory(e: Pick<AcmeEmulators, 'google' | 'microsoft' | 'slack'>, c: AcmeDirectoryChange): string {
  const email = c.email.toLowerCase();
  const g = e.google.tenant.users.find((u) => u.primaryEmail.toLowerCase() === email);
  const m = e.microsoft.tenant.users.find((u) => (u.mail ?? '').toLowerCase() === email);
  const s = e.slack.tenant.members.find((x) => (x.profile.email ?? '').toLowerCase() === email);
  if (c.action === 'add') {
    if (g || m) throw new Error(`${email} is already in the directory`);
    const [given = 'New', ...rest] = (c.name ?? email.split('@')[0]!).split(' ');
    const provider = c.provider ?? (email.endsWith('@eu.acme.test') ? 'microsoft' : 'google');
    const p: AcmePerson = {
      given_name: given,
      family_name: rest.join(' ') || 'Teammate',
      title: c.title ?? 'Teammate',
      department: 'New hires',
      email,
      phone: '',
      provider,
    };
    const i = added++;
    if (provider === 'google') {
      const u = googleUserOf(p, i);
      e.google.tenant.users.push(u);
      e.google.tenant.groups[0]?.members.push(u.id);
    } else {
      const u = microsoftUserOf(p, i);
      e.microsoft.addUser(u);
      e.microsoft.tenant.groups[0]?.members.push(u.id);
    }
    e.slack.addMember(slackMemberOf(p, i));
    return `added ${p.given_name} ${p.family_name} <${email}> to the ${provider === 'google' ? 'Google Workspace' : 'Microsoft 365'} directory`;
  }
  if (!g && !m) throw new Error(`${email} is not in the emulated directories`);
  if (c.action === 'remove') {
    if (g) {
      e.google.tenant.users.splice(e.google.tenant.users.indexOf(g), 1);
      for (const grp of e.google.tenant.groups) grp.members = grp.members.filter((id) => id !== g.id);
    }
    if (m) e.microsoft.removeUser(m.id);
    if (s) e.slack.removeMember(s.id);
    return `removed ${email}`;
  }
  if (c.action === 'rename') {
    if (!c.name) throw new Error('rename needs a name');
    const [given = c.name, ...rest] = c.name.split(' ');
    if (g) g.name = { givenName: given, familyName: rest.join(' '), fullName: c.name };
    if (m) e.microsoft.updateUser(m.id, { displayName: c.name, givenName: given, surname: rest.join(' ') });
    if (s) Object.assign(s, { real_name: c.name, profile: { ...s.profile, real_name: c.name } });
    return `renamed ${email} to ${c.name}`;
  }
  if (!c.title) throw new Error('title needs a title');
  if (g) g.organizations = [{ ...(g.organizations?.[0] ?? {}), title: c.title, primary: true }];
  if (m) e.microsoft.updateUser(m.id, { jobTitle: c.title });
  if (s) s.profile.title = c.title;
  return `changed the title of ${email} to ${c.title}`;
}
