/**
 * The compatibility report in plain words: what each mail client shows differently (from the
 * findings of compatibility.ts), and the signature's size against each destination's budget.
 * Served by `sigsync render --check`, GET /v1/signatures/{id}/compatibility and the warnings of a
 * draft write (docs/rendering.md, "Mail clients").
 */
import { checkHtml } from './compatibility.ts';
import { CLIENT_IDS, clientName, clientsOf, partWords, type ClientFamily, type ClientId, type Finding, type Part, type Support } from './emailClients.ts';
import { destinationReports, mailboxBudgets, sizeBudgets, type DestinationReport, type MailboxSize, type SizeBudget } from './compatibilitySizes.ts';

export { GMAIL_CLIP_BYTES, sizeBudgets, type Budget, type SizeBudget } from './compatibilitySizes.ts';

// ---------------------------------------------------------------------------------------------
// In plain words

export interface CompatibilityIssue {
  part: Part;
  /** The clients, by id (CLIENTS). */
  clients: ClientId[];
  /** In words a marketer reads: what these clients show differently. */
  message: string;
  /** caniemail's feature title, for people who want to look it up. */
  feature: string;
  support: Support;
}

function listNames(ids: readonly string[]): string {
  const names = ids.map(clientName);
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

/** What a CSS property or attribute draws, for people who do not write CSS. */
const PLAIN: Readonly<Record<string, string>> = {
  'border-radius': 'rounded corners',
  'background-image': 'background image',
  background: 'background',
  'background-color': 'background colour',
  'box-shadow': 'shadow',
  color: 'text colour',
  'font-family': 'font',
  'font-size': 'text size',
  'font-weight': 'bold text',
  'text-decoration': 'underlines',
  'line-height': 'line spacing',
  padding: 'inner spacing',
  margin: 'outer spacing',
  width: 'width',
  height: 'height',
  'max-width': 'maximum width',
  border: 'border',
  display: 'layout',
  bgcolor: 'background colour',
};

function effectOf(f: Finding): string {
  const u = f.usage;
  if (f.exception) return f.exception.shows?.(u) ?? '';
  const plain = PLAIN[u.name] ?? PLAIN[u.name.split('-')[0]!];
  const what =
    u.kind === 'element'
      ? `<${u.tag}> element`
      : u.kind === 'attribute'
        ? `${plain ?? u.name} (${u.name} attribute)`
        : `${plain ?? 'style'} (${u.name}:${u.value})`;
  const notes = f.notes.length ? `: ${f.notes.join(' ')}` : '';
  if (f.support === 'none') return `${partWords(u)} shows without its ${what}${notes}`;
  if (f.support === 'partial') return `${partWords(u)} may not show its ${what} as designed${notes}`;
  return `whether ${partWords(u)} shows its ${what} is not known${notes}`;
}

/** The findings a reader would notice, grouped by what they see: one entry per effect and part. */
export function compatibilityIssues(findings: readonly Finding[]): CompatibilityIssue[] {
  const groups = new Map<string, { issue: Omit<CompatibilityIssue, 'message'>; effect: string }>();
  for (const f of findings) {
    const effect = effectOf(f);
    if (!effect) continue;
    const key = `${f.usage.part}\n${effect}`;
    const g = groups.get(key);
    if (g) {
      if (!g.issue.clients.includes(f.client)) g.issue.clients.push(f.client);
    } else groups.set(key, { issue: { part: f.usage.part, clients: [f.client], feature: f.title, support: f.support }, effect });
  }
  return [...groups.values()].map(({ issue, effect }) => {
    const clients = CLIENT_IDS.filter((c) => issue.clients.includes(c));
    return { ...issue, clients, message: `In ${listNames(clients)}, ${effect}.` };
  });
}

// ---------------------------------------------------------------------------------------------
// The report

export type MessageKind = 'primary' | 'reply' | 'internal';

export const MESSAGE_KIND_WORDS: Readonly<Record<MessageKind, string>> = {
  primary: 'new messages',
  reply: 'replies and forwards',
  internal: 'messages to colleagues',
};

export interface KindReport {
  kind: MessageKind;
  /** The campaign whose banner was checked with the signature, if any. */
  banner: { id: string; name: string } | null;
  /** The sender's side: what the clients of the workspace's install destinations show differently. */
  issues: CompatibilityIssue[];
  /** The reader's side: what every client checked (CLIENTS, 13) shows differently; recipients read in any. */
  readers: CompatibilityIssue[];
  /**
   * What was checked and measured: `installed`, the HTML the assigned mailboxes would receive
   * (tracked links and the view image included); `longest_values`, with no mailbox assigned, the
   * signature rendered with each smart field's longest value, untracked.
   */
  measured_on: 'installed' | 'longest_values';
  /** Each integration the signature goes to, with the mailboxes that would refuse it. */
  destinations: DestinationReport[];
  sizes: SizeBudget[];
}

export interface CompatibilityReport {
  /** The sender's clients: those of the mailboxes the workspace installs into, or all when unknown. */
  clients: { id: ClientId; name: string }[];
  clients_from: 'installs' | 'all';
  /** The reader's clients: every client checked. */
  readers: { id: ClientId; name: string }[];
  kinds: KindReport[];
}

export interface CompatibilityWarning {
  code: 'client_support' | 'size_limit';
  kind: MessageKind;
  part: Part | null;
  clients: ClientId[];
  message: string;
  /** client_support: `sender` (a client of the workspace's mailboxes) or `reader` (another client recipients use). */
  side?: 'sender' | 'reader';
  /** size_limit: the mailboxes that would refuse the signature, and their destination's limit. */
  mailboxes?: string[];
  limit?: number;
}

/** A mailbox the signature goes to, with the HTML it would receive (src/install/fit.ts). */
export interface InstalledHtml extends MailboxSize {
  html: string;
  bannerAt: number;
  campaign: { id: string; name: string } | null;
}

export interface KindInput {
  kind: MessageKind;
  /** Rendered with each smart field's longest value: checked and measured when no mailbox gets it. */
  html: string;
  bannerAt: number;
  banner: KindReport['banner'];
  /** The mailboxes the signature goes to for this kind. */
  mailboxes?: readonly InstalledHtml[];
}

/** The HTML checked: per campaign shown, the largest any mailbox would receive. */
function checkedHtml(mailboxes: readonly InstalledHtml[]): InstalledHtml[] {
  const byCampaign = new Map<string, InstalledHtml>();
  for (const m of mailboxes) {
    const key = m.campaign?.id ?? '';
    const best = byCampaign.get(key);
    if (!best || m.html.length > best.html.length) byCampaign.set(key, m);
  }
  return [...byCampaign.values()].sort((a, b) => b.html.length - a.html.length);
}

/** One message kind's report: checked in every client, told apart by side, and measured. */
export function kindReport(input: KindInput, destinations: readonly ClientFamily[]): KindReport {
  const senders = new Set<string>(clientsOf(destinations));
  const mailboxes = input.mailboxes ?? [];
  const base = { kind: input.kind };
  if (mailboxes.length === 0) {
    const findings = checkHtml(input.html, { bannerAt: input.bannerAt });
    const sender = compatibilityIssues(findings.filter((f) => senders.has(f.client)));
    return {
      ...base,
      banner: input.banner,
      issues: sender,
      readers: compatibilityIssues(findings),
      measured_on: 'longest_values',
      destinations: [],
      sizes: sizeBudgets(input.html, destinations),
    };
  }
  const checked = checkedHtml(mailboxes);
  const findings = checked.flatMap((m) => checkHtml(m.html, { bannerAt: m.bannerAt }));
  const largestBytes = Math.max(...checked.map((m) => Buffer.byteLength(m.html, 'utf8')));
  return {
    ...base,
    banner: checked.find((m) => m.campaign)?.campaign ?? null,
    issues: compatibilityIssues(findings.filter((f) => senders.has(f.client))),
    readers: compatibilityIssues(findings),
    measured_on: 'installed',
    destinations: destinationReports(mailboxes),
    sizes: mailboxBudgets(mailboxes, largestBytes),
  };
}

const clientList = (ids: readonly ClientId[]) => ids.map((id) => ({ id, name: clientName(id) }));

export function compatibilityReport(kinds: KindReport[], destinations: readonly ClientFamily[]): CompatibilityReport {
  return { clients: clientList(clientsOf(destinations)), clients_from: destinations.length ? 'installs' : 'all', readers: clientList(CLIENT_IDS), kinds };
}

/**
 * What a marketer should see before publishing (and at publish): every client issue of the
 * sender's side, every issue of the reader's side in other clients, and every mailbox that would
 * refuse the signature, named with its destination's limit.
 */
export function compatibilityWarnings(report: CompatibilityReport): CompatibilityWarning[] {
  const out: CompatibilityWarning[] = [];
  const senders = new Set<string>(report.clients.map((c) => c.id));
  for (const k of report.kinds) {
    for (const i of k.issues) out.push({ code: 'client_support', kind: k.kind, part: i.part, clients: i.clients, message: i.message, side: 'sender' });
    for (const i of k.readers) {
      const others = i.clients.filter((c) => !senders.has(c));
      if (others.length)
        out.push({
          code: 'client_support',
          kind: k.kind,
          part: i.part,
          clients: others,
          message: i.message.replace(/^In [^,]+(?:, [^,]+)*?, /, `In ${listNames(others)}, `),
          side: 'reader',
        });
    }
    for (const d of k.destinations)
      if (!d.fits)
        out.push({ code: 'size_limit', kind: k.kind, part: null, clients: [], message: d.message, mailboxes: d.refused.map((r) => r.email), limit: d.limit });
    if (k.destinations.length === 0)
      for (const s of k.sizes) if (!s.fits) out.push({ code: 'size_limit', kind: k.kind, part: null, clients: [], message: s.message });
  }
  return out;
}

/** The report as text lines (`sigsync render --check`). */
export function reportLines(report: CompatibilityReport): string[] {
  const lines = [
    `clients   ${report.clients.map((c) => c.name).join(', ')} (${report.clients_from === 'installs' ? "the workspace's mailboxes: the sender's side" : 'all; no install destination is known'})`,
    `readers   every client recipients read in: ${report.readers.length} clients`,
  ];
  for (const k of report.kinds) {
    lines.push(
      '',
      `${k.kind} (${MESSAGE_KIND_WORDS[k.kind]})${k.banner ? `, with the banner of ${k.banner.name}` : ''}, ${k.measured_on === 'installed' ? 'as installed (tracked links and view image included)' : 'as rendered, untracked (no assigned mailbox receives it)'}`,
    );
    if (k.issues.length === 0) lines.push("  sender's side: shows as designed in every client checked");
    for (const i of k.issues) lines.push(`  - ${i.message}`);
    const more = k.readers.filter((i) => !k.issues.some((x) => x.message === i.message));
    if (report.clients.length < report.readers.length)
      lines.push(more.length ? "  reader's side, in other clients:" : "  reader's side: the other clients show it as the sender's do");
    for (const i of more) lines.push(`  - ${i.message}`);
    for (const s of k.sizes) lines.push(`  ${s.fits ? 'size' : 'TOO LONG'}: ${s.message}`);
  }
  return lines;
}
