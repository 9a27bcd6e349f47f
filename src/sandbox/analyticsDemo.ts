/**
 * The analytics chapter of the first-run demo: the sandbox workspace tracks links, so the installed
 * signatures carry `/c/{token}` links and one `/v/{token}` image. The demo opens one mailbox's
 * signature the way Gmail shows it (the image fetched through Gmail's image proxy: a proxied view),
 * follows two of its links the way readers do (one as a person's browser, one as a known crawler,
 * which is counted as a bot), records
 * a conversion against the person's click through `POST /v1/analytics/events`, rolls the day up at
 * once (the worker does it every minute) and says where to read the result.
 */
import type { Logger } from 'pino';
import type { AppContext } from '../context.ts';
import { countRecordedClicks } from '../analytics/clicks.ts';
import { rebuildRollups } from '../analytics/rollups.ts';
import type { ApiClient } from './flow.ts';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
const CRAWLER = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const GMAIL_PROXY = 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)';
/**
 * Whose signature the demo reads: the Head of Marketing, the person who checks the campaign's
 * figures. Named so that every run (and the README) shows the same mailbox; without tracked links
 * in it, the first mailbox by address that has them.
 */
export const DEMO_READER = 'grace.liu@acme.test';
/** The demo's order: the same id on every start, so a restart records it once. */
const ORDER = { event_id: 'demo-order-1001', name: 'Order completed', value: 490, currency: 'USD', user_id: 'customer-1001', traits: { plan: 'team' } };

export interface AnalyticsDemoResult {
  address: string;
  clickId: string;
  destinations: string[];
}

/** The tracked links of installed HTML, as paths of this server (PUBLIC_BASE_URL may name another host). */
function trackedPaths(html: string): string[] {
  return [...new Set([...html.matchAll(/<a href="(https?:\/\/[^"]*\/c\/[^"]+)"/g)].map((m) => new URL(m[1]!).pathname))];
}

/** The tracked image of installed HTML, as a path of this server. */
function viewPath(html: string): string | undefined {
  const m = /<img src="(https?:\/\/[^"]*\/v\/[^"]+)"/.exec(html);
  return m ? new URL(m[1]!).pathname : undefined;
}

async function follow(baseUrl: string, path: string, userAgent: string): Promise<URL> {
  const res = await fetch(`${baseUrl}${path}`, { redirect: 'manual', headers: { 'user-agent': userAgent } });
  const to = res.headers.get('location');
  if (res.status !== 302 || !to) throw new Error(`GET ${path} answered ${res.status}, not a redirect`);
  return new URL(to);
}

async function waitForClicks(ctx: AppContext, workspaceId: string, ids: string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await countRecordedClicks(ctx.pool, workspaceId, ids)) === ids.length) return;
    if (Date.now() > deadline) throw new Error(`the demo's clicks were not recorded within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Follows links of `reader`'s installed signature in `mailboxes` (address → HTML), or, when it has
 * no tracked links, of the first one by address that has; answers what it did, or undefined when
 * no signature carries tracked links. The mailboxes fill in install order, which differs between
 * runs: the choice must not depend on it.
 */
export async function runAnalyticsStory(
  ctx: AppContext,
  log: Logger,
  api: ApiClient,
  workspaceId: string,
  mailboxes: Record<string, string>,
  reader = DEMO_READER,
): Promise<AnalyticsDemoResult | undefined> {
  const found = Object.entries(mailboxes)
    .map(([address, html]) => ({ address, paths: trackedPaths(html ?? ''), view: viewPath(html ?? '') }))
    .filter((m) => m.paths.length >= 2)
    .sort((a, b) => Number(b.address === reader) - Number(a.address === reader) || a.address.localeCompare(b.address))[0];
  if (!found) {
    log.info('the installed signatures carry no tracked links (event tracking is off): no clicks to show');
    return undefined;
  }
  if (found.view) {
    // A banner image held elsewhere answers with a redirect to it, which the demo does not follow.
    const res = await fetch(`${api.baseUrl}${found.view}`, { redirect: 'manual', headers: { 'user-agent': GMAIL_PROXY } });
    await res.arrayBuffer();
    if (res.status === 200 || res.status === 302)
      log.info(`opened ${found.address}'s signature as Gmail shows it: its tracked image fetched through Gmail's image proxy (a proxied view)`);
  }
  // The person follows the campaign banner's link (the last one), the crawler the first link.
  const [human, crawler] = [await follow(api.baseUrl, found.paths.at(-1)!, BROWSER), await follow(api.baseUrl, found.paths[0]!, CRAWLER)];
  const clickId = human.searchParams.get('click_id')!;
  const destinations = [human, crawler].map((u) => `${u.origin}${u.pathname}`);
  log.info(
    `followed 2 tracked links of ${found.address}'s signature: ${destinations[0]} as a browser (a person's click), ${destinations[1]} as Googlebot (counted as a bot)`,
  );
  await waitForClicks(ctx, workspaceId, [clickId, crawler.searchParams.get('click_id')!]);
  const r = await api.request('POST', '/v1/analytics/events', { event: { ...ORDER, click_id: clickId } });
  if (r.status !== 200) throw new Error(`POST /v1/analytics/events answered ${r.status}: ${JSON.stringify(r.body)}`);
  log.info(`recorded a ${ORDER.value} ${ORDER.currency} conversion against that click (event_id ${ORDER.event_id}: sent again on every start, counted once)`);
  await rebuildRollups(ctx.pool, { workspaceId });
  return { address: found.address, clickId, destinations };
}
