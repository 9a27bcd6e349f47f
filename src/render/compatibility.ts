/**
 * How a rendered signature shows in the mail clients people read it in, from caniemail.com's
 * support data (the `caniemail` package).
 *
 * The check: every element, attribute and CSS declaration of the HTML is looked up for each client
 * (one small probe per distinct usage, so a feature is attributed to exactly the attribute or
 * declaration that uses it; probe results are cached). A usage that a client does not support, or
 * supports only partly, is a finding. Each finding is either explained by an entry of EXCEPTIONS
 * (why it does not change how the signature looks, or what the reader sees instead) or it is new:
 * `unexplained()` lists those, and the test over every render fixture fails on any.
 *
 * caniemail's data lacks some features for some clients and the package then throws a RangeError;
 * such a usage is a finding with support `unknown` for that client, never a crash. The package
 * (2.0.2) also never matches CSS functions in values (`rgb()`, `rgba()`, `calc()`): its lookup
 * compares the function name with the feature's title. Functions are looked up in its data here.
 *
 * Two more quirks of the package are corrected here (caniemailData.ts):
 * - It reads a client's support from the version key that sorts last as a string ("6.1" after
 *   "12.2", "2016" after "16.80"); the data lists versions oldest first, so the last one listed
 *   is the current one, and the data is reduced to it before any lookup.
 * - It matches a longhand property under its shorthand's feature (`background-color` is reported
 *   as `background`); where the longhand has a feature of its own, only that one is kept.
 */
import { caniemail, getAllFeatures, parseHtml, rawData } from 'caniemail';
import { CSS_TITLES, currentVersionsOnly } from './caniemailData.ts';
import { CLIENT_IDS, EXCEPTIONS, type ClientId, type Declaration, type Finding, type Part, type Support, type Usage } from './emailClients.ts';

// ---------------------------------------------------------------------------------------------
// Probing caniemail

interface ProbeIssue {
  title: string;
  support: Support;
  notes: string[];
}

currentVersionsOnly();

/** probe HTML → client → issues. Bounded: the vocabulary of the renderer is small, values repeat. */
const probeCache = new Map<string, Map<string, ProbeIssue[]>>();
const MAX_PROBES = 20_000;

function escapeProbe(s: string): string {
  return s.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
}

const VOID = new Set(['img', 'br']);

function probeHtml(tag: string, attr: string): string {
  return VOID.has(tag) ? `<${tag}${attr}>` : `<${tag}${attr}></${tag}>`;
}

function collect(result: ReturnType<typeof caniemail>, into: Map<string, ProbeIssue[]>): void {
  for (const [map, support] of [
    [result.issues.errors, 'none'],
    [result.issues.warnings, 'partial'],
  ] as const) {
    for (const [client, issues] of map) {
      const list = into.get(client) ?? [];
      for (const i of issues) list.push({ title: i.title, support, notes: i.notes });
      into.set(client, list);
    }
  }
}

/** Issues of one probe for each client; a client without data for a feature gets an `unknown` issue. */
function probe(html: string, clients: readonly ClientId[]): Map<string, ProbeIssue[]> {
  const key = `${clients.join(',')}\n${html}`;
  let hit = probeCache.get(key);
  if (hit) return hit;
  hit = new Map();
  try {
    collect(caniemail({ clients: [...clients], html }), hit);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    // One client lacks data for a feature: ask client by client, so only that one is unknown.
    hit = new Map();
    for (const c of clients) {
      try {
        collect(caniemail({ clients: [c], html }), hit);
      } catch (err) {
        if (!(err instanceof RangeError)) throw err;
        const title = /Feature "([^"]+)"/.exec(err.message)?.[1] ?? err.message;
        hit.set(c, [...(hit.get(c) ?? []), { title, support: 'unknown', notes: [err.message] }]);
      }
    }
  }
  if (probeCache.size >= MAX_PROBES) probeCache.delete(probeCache.keys().next().value!);
  probeCache.set(key, hit);
  return hit;
}

/** CSS function name → caniemail feature title (`rgba` → `rgba()`, `calc` → `CSS calc() function`). */
const FUNCTION_TITLES: ReadonlyMap<string, string> = new Map(
  rawData.data
    .filter((f) => f.category === 'css' && !f.title.startsWith(':'))
    .flatMap((f) => [...f.title.matchAll(/([a-z-]+)\(\)/g)].filter((m) => m[1] !== 'lang').map((m) => [m[1]!, f.title] as const)),
);

/** client → feature title → support, from caniemail's data; a feature without data for the client is absent. */
const supportByClient = new Map<string, Map<string, ProbeIssue>>();

function supportOf(client: ClientId, title: string): ProbeIssue {
  let m = supportByClient.get(client);
  if (!m) {
    m = new Map();
    const { supported, unsupported } = getAllFeatures([client]);
    for (const map of [supported, unsupported])
      for (const f of map.get(client) ?? []) m.set(f.title, { title: f.title, support: f.support === 'full' ? 'none' : f.support, notes: f.notes });
    for (const f of supported.get(client) ?? []) if (f.support === 'full') m.set(f.title, { title: f.title, support: 'unknown', notes: ['full'] });
    supportByClient.set(client, m);
  }
  return m.get(title) ?? { title, support: 'unknown', notes: [`Feature "${title}" not found on "${client}".`] };
}

/** Issues of the CSS functions in a value (what the package misses; see the top of this file). */
function functionIssues(value: string, client: ClientId): ProbeIssue[] {
  const out: ProbeIssue[] = [];
  for (const m of value.matchAll(/([a-z-]+)\(/g)) {
    const title = FUNCTION_TITLES.get(m[1]!);
    if (!title) continue;
    const s = supportOf(client, title);
    if (!(s.support === 'unknown' && s.notes[0] === 'full')) out.push(s);
  }
  return out;
}

/** A shorthand's feature matched for a longhand that has a feature of its own (`background` for `background-color`). */
function shorthandOfOwnFeature(title: string, property: string): boolean {
  return title !== property && property.startsWith(`${title}-`) && CSS_TITLES.has(property);
}

/** Issues a probe adds to its base probe (the bare element, or the element with an empty style). */
function added(usage: Map<string, ProbeIssue[]>, base: Map<string, ProbeIssue[]>, client: string): ProbeIssue[] {
  const known = new Set((base.get(client) ?? []).map((i) => `${i.title}\n${i.support}`));
  return (usage.get(client) ?? []).filter((i) => !known.has(`${i.title}\n${i.support}`));
}

// ---------------------------------------------------------------------------------------------
// Walking the HTML

interface DomNode {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
  parent?: DomNode | null;
  startIndex: number | null;
}

export function parseStyle(css: string): Declaration[] {
  const out: Declaration[] = [];
  for (const part of css.split(';')) {
    const i = part.indexOf(':');
    if (i <= 0) continue;
    out.push({ property: part.slice(0, i).trim().toLowerCase(), value: part.slice(i + 1).trim() });
  }
  return out;
}

function verticalPadding(style: readonly Declaration[]): string {
  let top = '0';
  let bottom = '0';
  for (const d of style) {
    if (d.property === 'padding') {
      const v = d.value.split(/\s+/);
      top = v[0] ?? '0';
      bottom = v[2] ?? v[0] ?? '0';
    } else if (d.property === 'padding-top') top = d.value;
    else if (d.property === 'padding-bottom') bottom = d.value;
  }
  return `${top} ${bottom}`;
}

function elements(nodes: readonly DomNode[] | undefined, out: DomNode[]): DomNode[] {
  for (const n of nodes ?? []) {
    if (n.type === 'tag') {
      out.push(n);
      elements(n.children, out);
    } else if (n.children) elements(n.children, out);
  }
  return out;
}

/** Every element, attribute and declaration of the HTML, with its context. */
export function usagesOf(html: string, bannerAt = -1): Usage[] {
  const { document } = parseHtml(html) as unknown as { document: DomNode };
  const all = elements(document.children, []);
  const differs = new Set<DomNode>();
  for (const tr of all) {
    if (tr.name !== 'tr') continue;
    const cells = (tr.children ?? []).filter((c) => c.type === 'tag' && c.name === 'td');
    const pads = new Set(cells.map((c) => verticalPadding(parseStyle(c.attribs?.style ?? ''))));
    if (pads.size > 1) for (const c of cells) differs.add(c);
  }
  // The element whose line height each image stands in: the nearest above it that sets one.
  const imageLines = new Set<DomNode>();
  for (const img of all) {
    if (img.name !== 'img') continue;
    let e = img.parent;
    while (e && !parseStyle(e.attribs?.style ?? '').some((d) => d.property === 'line-height')) e = e.parent;
    if (e) imageLines.add(e);
  }
  const out: Usage[] = [];
  for (const el of all) {
    const tag = el.name!;
    const attrs = el.attribs ?? {};
    const style = parseStyle(attrs.style ?? '');
    const part: Part = bannerAt >= 0 && (el.startIndex ?? 0) >= bannerAt ? 'banner' : 'signature';
    const base = { tag, attrs, style, part, rowPaddingDiffers: differs.has(el), holdsImage: imageLines.has(el), index: -1 };
    out.push({ ...base, kind: 'element', name: '', value: '' });
    for (const [name, value] of Object.entries(attrs)) if (name !== 'style') out.push({ ...base, kind: 'attribute', name, value });
    style.forEach((d, index) => out.push({ ...base, kind: 'css', name: d.property, value: d.value, index }));
  }
  return out;
}

function probeOf(u: Usage): { html: string; base: string } {
  const bare = probeHtml(u.tag, '');
  if (u.kind === 'element') return { html: bare, base: '' };
  if (u.kind === 'attribute') return { html: probeHtml(u.tag, ` ${u.name}="${escapeProbe(u.value)}"`), base: bare };
  return { html: probeHtml(u.tag, ` style="${escapeProbe(`${u.name}:${u.value}`)}"`), base: probeHtml(u.tag, ' style=""') };
}

/** Every finding for the HTML in the given clients (all by default). */
export function checkHtml(html: string, opts: { bannerAt?: number; clients?: readonly ClientId[] } = {}): Finding[] {
  const clients = opts.clients ?? CLIENT_IDS;
  if (!html || clients.length === 0) return [];
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const u of usagesOf(html, opts.bannerAt)) {
    const { html: p, base } = probeOf(u);
    const issuesByClient = probe(p, clients);
    const baseByClient = base ? probe(base, clients) : new Map<string, ProbeIssue[]>();
    for (const client of clients) {
      const issues = added(issuesByClient, baseByClient, client).filter((i) => u.kind !== 'css' || !shorthandOfOwnFeature(i.title, u.name));
      if (u.kind === 'css') issues.push(...functionIssues(u.value, client));
      for (const issue of issues) {
        const exception = EXCEPTIONS.find(
          (x) => (typeof x.title === 'string' ? x.title === issue.title : x.title.includes(issue.title)) && x.clients.includes(client) && x.applies(u),
        );
        // One finding per client, feature, exception and way of use (the same cell style repeats).
        const key = `${client}\n${issue.title}\n${u.part}\n${u.kind}\n${u.tag}\n${u.name}\n${u.value}\n${exception?.id ?? ''}\n${u.rowPaddingDiffers}\n${u.holdsImage}\n${u.style.map((d) => `${d.property}:${d.value}`).join(';')}`;
        if (seen.has(key)) continue;
        seen.add(key);
        findings.push({ client, title: issue.title, support: issue.support, notes: issue.notes, usage: u, exception });
      }
    }
  }
  return findings;
}

/** Findings no exception explains: what the check fails on. */
export function unexplained(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => !f.exception);
}

/** One line per unexplained finding, for test failures and the CLI. */
export function describeFinding(f: Finding): string {
  const what =
    f.usage.kind === 'element'
      ? `<${f.usage.tag}>`
      : f.usage.kind === 'attribute'
        ? `${f.usage.name}="${f.usage.value}" on <${f.usage.tag}>`
        : `${f.usage.name}:${f.usage.value} on <${f.usage.tag}>`;
  return `${f.client}: ${f.title} (${f.support}) for ${what} in the ${f.usage.part}${f.notes.length ? ` - ${f.notes.join(' ')}` : ''}`;
}
