/**
 * The size verdict of the compatibility report, per assigned mailbox: each mailbox measured on the
 * HTML it would receive (tracked links and the view image included) against its destination's
 * limit, as src/install/fit.ts works them out with the install's own dry run. Here they are
 * grouped per integration (`destinations`) and per kind of limit (the `sizes` budgets), in words.
 */
import type { ClientFamily } from './emailClients.ts';
import { SIGNATURE_SIZE_LIMITS } from './limits.ts';

/** Gmail shows "[Message clipped]" and hides the rest of a message past 102 KB of HTML. */
export const GMAIL_CLIP_BYTES = 102 * 1024;

export type Budget = 'gmail' | 'outlook_addin' | 'outlook_owa' | 'slack' | 'gmail_clipping';

export interface SizeBudget {
  budget: Budget;
  /** Characters of HTML for the signature limits, bytes of the whole message for clipping. */
  unit: 'characters' | 'bytes';
  limit: number;
  size: number;
  /** size / limit, rounded to three decimals: the signature's share of the budget. */
  share: number;
  fits: boolean;
  message: string;
}

const fmt = (n: number) => n.toLocaleString('en-US');
const pct = (share: number) => `${Math.round(share * 1000) / 10}%`;

/**
 * The signature's HTML against each budget, when no mailbox is assigned: `destinations` limits the
 * two signature limits to the mailboxes the workspace installs into (none known: both); clipping
 * concerns every message. With mailboxes, the budgets are theirs (mailboxBudgets).
 */
export function sizeBudgets(html: string, destinations: readonly ClientFamily[] = []): SizeBudget[] {
  const chars = html.length;
  const bytes = Buffer.byteLength(html, 'utf8');
  const out: SizeBudget[] = [];
  const all = destinations.length === 0;
  const limitOf = (budget: 'gmail' | 'outlook_addin', limit: number, who: string, otherwise: string) => {
    const fits = chars <= limit;
    const said = `${who} of up to ${fmt(limit)} characters of HTML; this one is ${fmt(chars)}`;
    out.push({
      budget,
      unit: 'characters',
      limit,
      size: chars,
      share: share(chars, limit),
      fits,
      message: fits ? `${said} (${pct(chars / limit)}).` : `${said}, so ${otherwise} until it is shorter.`,
    });
  };
  if (all || destinations.includes('gmail')) limitOf('gmail', SIGNATURE_SIZE_LIMITS.gmail, 'Gmail takes signatures', 'it cannot be installed in Gmail');
  if (all || destinations.includes('outlook'))
    limitOf('outlook_addin', SIGNATURE_SIZE_LIMITS.outlook, 'The Outlook add-in sets signatures', 'Outlook will not get it');
  out.push(clipBudget(bytes));
  return out;
}

function clipBudget(bytes: number): SizeBudget {
  const times = bytes > 0 ? Math.floor(GMAIL_CLIP_BYTES / bytes) : 0;
  const fits = bytes <= GMAIL_CLIP_BYTES;
  return {
    budget: 'gmail_clipping',
    unit: 'bytes',
    limit: GMAIL_CLIP_BYTES,
    size: bytes,
    share: share(bytes, GMAIL_CLIP_BYTES),
    fits,
    message: fits
      ? `Gmail clips a message past 102 KB and hides the rest behind "View entire message"; the signature takes ${fmt(bytes)} bytes of it (${pct(bytes / GMAIL_CLIP_BYTES)}), so a reply thread that quotes it ${times} times is clipped on signatures alone.`
      : `Gmail clips a message past 102 KB; the signature alone is ${fmt(bytes)} bytes, so every message that carries it is clipped.`,
  };
}

/** One mailbox the signature goes to, measured on what it would receive. */
export interface MailboxSize {
  address: string;
  integration: { id: string; name: string; kind: string };
  /** `addin`: the Outlook add-in inserts it; `provider`: the provider's own write. */
  way: 'addin' | 'provider';
  size: number;
  limit: number;
  fits: boolean;
}

export type SignatureBudget = Exclude<Budget, 'gmail_clipping'>;

export interface DestinationReport {
  integration_id: string;
  name: string;
  budget: SignatureBudget;
  limit: number;
  /** How many mailboxes of this integration get the signature. */
  mailboxes: number;
  /** The largest HTML one of them would receive, in characters. */
  largest: number;
  fits: boolean;
  /** The mailboxes that would refuse it, largest first. */
  refused: { email: string; size: number }[];
  message: string;
}

const WHO: Readonly<Record<SignatureBudget, string>> = {
  gmail: 'Gmail',
  outlook_addin: 'the Outlook add-in',
  outlook_owa: 'Outlook on the web',
  slack: 'a Slack message',
};

/** Which limit a mailbox is held to, by its integration's provider and way. */
export function budgetOf(m: Pick<MailboxSize, 'integration' | 'way'>): SignatureBudget {
  if (m.way === 'addin') return 'outlook_addin';
  if (m.integration.kind === 'google_workspace') return 'gmail';
  if (m.integration.kind === 'microsoft_entra') return 'outlook_owa';
  return 'slack';
}

const pctOf = (n: number, limit: number) => pct(n / limit);
const share = (n: number, limit: number) => Math.round((n / limit) * 1000) / 1000;
const plural = (n: number, one: string, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

/** Up to ten addresses with their sizes, then how many more. */
export function namedMailboxes(refused: readonly { email: string; size: number }[]): string {
  const named = refused.slice(0, 10).map((r) => `${r.email} (${fmt(r.size)})`);
  const more = refused.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${fmt(more)} more` : named.length <= 1 ? (named[0] ?? '') : `${named.slice(0, -1).join(', ')} and ${named.at(-1)}`;
}

function verdict(who: string, limit: number, all: readonly MailboxSize[]): { largest: number; refused: { email: string; size: number }[]; message: string } {
  const largest = Math.max(0, ...all.map((m) => m.size));
  const refused = all
    .filter((m) => !m.fits)
    .map((m) => ({ email: m.address, size: m.size }))
    .sort((a, b) => b.size - a.size || (a.email < b.email ? -1 : 1));
  const head = `${who} takes signatures of up to ${fmt(limit)} characters of HTML`;
  const message = refused.length
    ? `${head}: ${plural(refused.length, 'mailbox', 'mailboxes')} of ${fmt(all.length)} would receive more, tracked links included, so they do not get it until it is shorter: ${namedMailboxes(refused)}. The others get it.`
    : `${head}; ${all.length === 1 ? 'its mailbox' : `the largest of its ${fmt(all.length)} mailboxes`} would receive ${fmt(largest)}, tracked links included (${pctOf(largest, limit)}).`;
  return { largest, refused, message };
}

/** One entry per integration the signature goes to. */
export function destinationReports(mailboxes: readonly MailboxSize[]): DestinationReport[] {
  const groups = new Map<string, MailboxSize[]>();
  for (const m of mailboxes) groups.set(m.integration.id, [...(groups.get(m.integration.id) ?? []), m]);
  return [...groups.values()].map((all) => {
    const first = all[0]!;
    const budget = budgetOf(first);
    const limit = Math.min(...all.map((m) => m.limit));
    const v = verdict(`${first.integration.name} (${WHO[budget]})`, limit, all);
    return {
      integration_id: first.integration.id,
      name: first.integration.name,
      budget,
      limit,
      mailboxes: all.length,
      largest: v.largest,
      fits: v.refused.length === 0,
      refused: v.refused,
      message: v.message,
    };
  });
}

/** The budgets of the mailboxes: one per kind of limit, then Gmail's clipping on the largest HTML. */
export function mailboxBudgets(mailboxes: readonly MailboxSize[], largestBytes: number): SizeBudget[] {
  const groups = new Map<SignatureBudget, MailboxSize[]>();
  for (const m of mailboxes) groups.set(budgetOf(m), [...(groups.get(budgetOf(m)) ?? []), m]);
  const out: SizeBudget[] = [...groups.entries()].map(([budget, all]) => {
    const limit = Math.min(...all.map((m) => m.limit));
    const v = verdict(WHO[budget].replace(/^t/, 'T').replace(/^a /, 'A '), limit, all);
    return { budget, unit: 'characters', limit, size: v.largest, share: share(v.largest, limit), fits: v.refused.length === 0, message: v.message };
  });
  out.push(clipBudget(largestBytes));
  return out;
}
