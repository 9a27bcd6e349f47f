/**
 * The compatibility report in plain words: what each mail client shows differently (from the
 * findings of compatibility.ts), and the signature's size against each destination's budget.
 * Served by `sigsync render --check`, GET /v1/signatures/{id}/compatibility and the warnings of a
 * draft write (docs/rendering.md, "Mail clients").
 */
import { checkHtml } from './compatibility.ts';
import { CLIENT_IDS, clientName, clientsOf, partWords, type ClientFamily, type ClientId, type Finding, type Part, type Support } from './emailClients.ts';
import { SIGNATURE_SIZE_LIMITS } from './limits.ts';

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
  const what = u.kind === 'element' ? `<${u.tag}> element` : u.kind === 'attribute' ? `${plain ?? u.name} (${u.name} attribute)` : `${plain ?? 'style'} (${u.name}:${u.value})`;
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
// Size budgets

/** Gmail shows "[Message clipped]" and hides the rest of a message past 102 KB of HTML. */
export const GMAIL_CLIP_BYTES = 102 * 1024;

export type Budget = 'gmail' | 'outlook_addin' | 'gmail_clipping';

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
 * The signature's HTML against each budget. `destinations` limits the two signature limits to the
 * mailboxes the workspace installs into (none known: both); clipping concerns every message.
 */
export function sizeBudgets(html: string, destinations: readonly ClientFamily[] = []): SizeBudget[] {
  const chars = html.length;
  const bytes = Buffer.byteLength(html, 'utf8');
  const share = (n: number, limit: number) => Math.round((n / limit) * 1000) / 1000;
  const out: SizeBudget[] = [];
  const all = destinations.length === 0;
  const limitOf = (budget: 'gmail' | 'outlook_addin', limit: number, who: string, otherwise: string) => {
    const fits = chars <= limit;
    const said = `${who} of up to ${fmt(limit)} characters of HTML; this one is ${fmt(chars)}`;
    out.push({ budget, unit: 'characters', limit, size: chars, share: share(chars, limit), fits, message: fits ? `${said} (${pct(chars / limit)}).` : `${said}, so ${otherwise} until it is shorter.` });
  };
  if (all || destinations.includes('gmail')) limitOf('gmail', SIGNATURE_SIZE_LIMITS.gmail, 'Gmail takes signatures', 'it cannot be installed in Gmail');
  if (all || destinations.includes('outlook')) limitOf('outlook_addin', SIGNATURE_SIZE_LIMITS.outlook, 'The Outlook add-in sets signatures', 'Outlook will not get it');
  const times = bytes > 0 ? Math.floor(GMAIL_CLIP_BYTES / bytes) : 0;
  const fits = bytes <= GMAIL_CLIP_BYTES;
  out.push({
    budget: 'gmail_clipping',
    unit: 'bytes',
    limit: GMAIL_CLIP_BYTES,
    size: bytes,
    share: share(bytes, GMAIL_CLIP_BYTES),
    fits,
    message: fits
      ? `Gmail clips a message past 102 KB and hides the rest behind "View entire message"; the signature takes ${fmt(bytes)} bytes of it (${pct(bytes / GMAIL_CLIP_BYTES)}), so a reply thread that quotes it ${times} times is clipped on signatures alone.`
      : `Gmail clips a message past 102 KB; the signature alone is ${fmt(bytes)} bytes, so every message that carries it is clipped.`,
  });
  return out;
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
  issues: CompatibilityIssue[];
  sizes: SizeBudget[];
}

export interface CompatibilityReport {
  /** The clients checked: those of the mailboxes the workspace installs into, or all when unknown. */
  clients: { id: ClientId; name: string }[];
  clients_from: 'installs' | 'all';
  kinds: KindReport[];
}

export interface CompatibilityWarning {
  code: 'client_support' | 'size_limit';
  kind: MessageKind;
  part: Part | null;
  clients: ClientId[];
  message: string;
}

/** One message kind's report from its rendered HTML (with the banner at `bannerAt`, -1 for none). */
export function kindReport(kind: MessageKind, html: string, bannerAt: number, banner: KindReport['banner'], destinations: readonly ClientFamily[]): KindReport {
  const clients = clientsOf(destinations);
  return { kind, banner, issues: compatibilityIssues(checkHtml(html, { bannerAt, clients })), sizes: sizeBudgets(html, destinations) };
}

export function compatibilityReport(kinds: KindReport[], destinations: readonly ClientFamily[]): CompatibilityReport {
  return { clients: clientsOf(destinations).map((id) => ({ id, name: clientName(id) })), clients_from: destinations.length ? 'installs' : 'all', kinds };
}

/** What a marketer should see before publishing: every client issue, and every budget exceeded. */
export function compatibilityWarnings(report: CompatibilityReport): CompatibilityWarning[] {
  const out: CompatibilityWarning[] = [];
  for (const k of report.kinds) {
    for (const i of k.issues) out.push({ code: 'client_support', kind: k.kind, part: i.part, clients: i.clients, message: i.message });
    for (const s of k.sizes) if (!s.fits) out.push({ code: 'size_limit', kind: k.kind, part: null, clients: [], message: s.message });
  }
  return out;
}

/** The report as text lines (`sigsync render --check`). */
export function reportLines(report: CompatibilityReport): string[] {
  const lines = [`clients   ${report.clients.map((c) => c.name).join(', ')} (${report.clients_from === 'installs' ? "the workspace's mailboxes" : 'all; no install destination is known'})`];
  for (const k of report.kinds) {
    lines.push('', `${k.kind} (${MESSAGE_KIND_WORDS[k.kind]})${k.banner ? `, with the banner of ${k.banner.name}` : ''}`);
    if (k.issues.length === 0) lines.push('  shows as designed in every client checked');
    for (const i of k.issues) lines.push(`  - ${i.message}`);
    for (const s of k.sizes) lines.push(`  ${s.fits ? 'size' : 'TOO LONG'}: ${s.message}`);
  }
  return lines;
}

