/**
 * Rows read by key and kept for a while in a bounded in-process cache (lru-cache): the public
 * routes (tracked links, tracked images, the browser ingest) read what a token or an id names once
 * a minute rather than on every request, and concurrent requests for one key share one read.
 * `held` answers a row already held without a promise, so that the tracked-link redirect, which
 * finds nearly every link held, does not wait a turn of the event loop's microtasks for it.
 */
import { LRUCache } from 'lru-cache';

export interface RecentOptions {
  ttlMs: number;
  max: number;
  /** Keep "not found" as well (the default); false asks again on the next request. */
  keepMisses?: boolean;
}

export interface RecentRows<T> {
  /** The row of a key (null: none), read when it is not held. */
  (key: string): Promise<T | null>;
  /** The row of a key when it is held and fresh (`{row: null}`: held as missing); undefined when it must be read. */
  held(key: string): { row: T | null } | undefined;
}

export function recentRows<T>(load: (key: string) => Promise<T | null>, o: RecentOptions): RecentRows<T> {
  const cache = new LRUCache<string, { row: T | null }>({
    max: o.max,
    ttl: o.ttlMs,
    fetchMethod: async (key) => {
      const row = await load(key);
      return row === null && o.keepMisses === false ? undefined : { row };
    },
  });
  const read = async (key: string) => (await cache.fetch(key))?.row ?? null;
  return Object.assign(read, { held: (key: string) => cache.get(key) });
}
