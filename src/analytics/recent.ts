/**
 * Rows read by key and kept for a while in a bounded in-process cache (lru-cache): the public
 * routes (tracked links, tracked images, the browser ingest) read what a token or an id names once
 * a minute rather than on every request, and concurrent requests for one key share one read.
 */
import { LRUCache } from 'lru-cache';

export interface RecentOptions {
  ttlMs: number;
  max: number;
  /** Keep "not found" as well (the default); false asks again on the next request. */
  keepMisses?: boolean;
}

export function recentRows<T>(load: (key: string) => Promise<T | null>, o: RecentOptions): (key: string) => Promise<T | null> {
  const cache = new LRUCache<string, { row: T | null }>({
    max: o.max,
    ttl: o.ttlMs,
    fetchMethod: async (key) => {
      const row = await load(key);
      return row === null && o.keepMisses === false ? undefined : { row };
    },
  });
  return async (key) => (await cache.fetch(key))?.row ?? null;
}
