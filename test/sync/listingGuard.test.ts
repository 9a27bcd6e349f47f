/**
 * The bound on a listing (src/sync/pages.ts): a first sync of a large directory and a directory that
 * grew at once complete; a provider that never ends, with fresh tokens or a repeated one, is stopped.
 */
import { describe, expect, it } from 'vitest';
import type { DirectoryPage, DirectoryUser } from '../../connectors/types.ts';
import { defaultListingBound, EndlessListingError, ListingGuard } from '../../src/sync/pages.ts';

const page = (users: number, next: string | null): DirectoryPage => ({
  users: Array.from({ length: users }, () => ({}) as DirectoryUser),
  removedIds: [],
  skipped: [],
  nextPageToken: next,
});

/** Pages of `size` users with fresh tokens until the guard stops them; answers how many it let through. */
function listUntilStopped(guard: ListingGuard, size: number, max: number): number {
  for (let i = 1; i <= max; i++) {
    try {
      guard.check(page(size, `t${i}`));
    } catch (err) {
      expect(err).toBeInstanceOf(EndlessListingError);
      expect((err as EndlessListingError).code).toBe('invalid_response');
      return i - 1;
    }
  }
  return max;
}

describe('listing bound', () => {
  it('lets a first sync of 100,000 users (no known size) and a directory grown from 10 to 500,000 complete', () => {
    expect(listUntilStopped(new ListingGuard(defaultListingBound(0), { pages: 0, seen: 0 }, undefined), 500, 200)).toBe(200);
    expect(listUntilStopped(new ListingGuard(defaultListingBound(10), { pages: 0, seen: 0 }, undefined), 500, 1000)).toBe(1000);
  });

  it('stops a provider that gives fresh tokens forever, after a bound set by the known size', () => {
    const through = listUntilStopped(new ListingGuard(defaultListingBound(2909), { pages: 0, seen: 0 }, undefined), 500, 100_000);
    expect(through).toBeGreaterThan(2000);
    expect(through).toBeLessThan(2100);
  });

  it('stops at the first token the provider already gave in the run, also one a resumed run started from', () => {
    const guard = new ListingGuard(defaultListingBound(100), { pages: 3, seen: 1500 }, 'resumed');
    guard.check(page(500, 'a'));
    expect(() => guard.check(page(500, 'resumed'))).toThrow(/already given/);
  });
});
