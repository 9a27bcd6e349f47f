/**
 * UTM parameters of a campaign (`marketing_campaign.utm`), added to every web link of its banner so
 * that the customer's own web analytics sees the clicks a banner brings, tracked or not.
 *
 * They are added to the banner's content tree once, when the banner is compiled (load.ts), as
 * ordinary query parameters of each http(s) href: the renderer encodes them, the HTML and the
 * plain-text alternative carry them, and link tracking (src/analytics/links.ts) sees destinations
 * that already have them. A parameter the link already sets, in its URL or in its own queryParams,
 * wins over the campaign's: the marketer's choice on one link is kept.
 *
 * Links whose address comes from a smart field alone (no literal `https://` prefix) are left as
 * they are: whether they are web links is known only per teammate.
 */
import type { ContentTree, Href } from './schema.ts';
import { UTM_KEYS, type Utm } from '../domain.ts';

export type { Utm };

const WEB = /^\s*https?:\/\//i;

/** The parameter names a URL's query string already sets. */
function queryKeys(url: string): Set<string> {
  const q = url.split('#', 1)[0]!.split('?').slice(1).join('?');
  return new Set(new URLSearchParams(q).keys());
}

function tagHref(h: Href, pairs: [string, string][]): Href {
  if (h.text === undefined || !WEB.test(h.text)) return h;
  const taken = queryKeys(h.text);
  for (const q of h.queryParams ?? []) taken.add(q.key);
  const added = pairs.filter(([key]) => !taken.has(key)).map(([key, text]) => ({ key, values: [{ text }] }));
  return added.length ? { ...h, queryParams: [...(h.queryParams ?? []), ...added] } : h;
}

function walk(node: unknown, pairs: [string, string][]): unknown {
  if (Array.isArray(node)) return node.map((n) => walk(n, pairs));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === 'href' && v !== null && typeof v === 'object' && !Array.isArray(v) ? tagHref(v as Href, pairs) : walk(v, pairs);
  }
  return out;
}

/** The tree with the campaign's UTM parameters on each web link; the tree itself without any. */
export function withUtm(tree: ContentTree, utm: Utm | null | undefined): ContentTree {
  const pairs = UTM_KEYS.filter((k) => utm?.[k]).map((k): [string, string] => [`utm_${k}`, utm![k]!]);
  return pairs.length ? (walk(tree, pairs) as ContentTree) : tree;
}
