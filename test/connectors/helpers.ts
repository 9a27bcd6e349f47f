/**
 * What the connector tests of every provider share: nock as the only network, the recorded
 * provider answers under fixtures/, and a directory source's pages listed to the end.
 */
import fs from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { DirectoryPage, DirectorySource, FetchUsersOptions } from '../../connectors/types.ts';

export { captureLogger } from '../helpers/logs.ts';

/** For the file it is called in: no real connection, and every interceptor dropped after each test. */
export function useNock(): void {
  beforeAll(() => nock.disableNetConnect());
  afterEach(() => nock.cleanAll());
  afterAll(() => nock.enableNetConnect());
}

/** Reads a recorded provider answer from fixtures/`provider`/, by file name. */
export function fixtureReader(provider: 'google' | 'microsoft' | 'slack') {
  const dir = path.resolve(import.meta.dirname, '../../fixtures', provider);
  return <T = Record<string, unknown>>(name: string): T => JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as T;
}

/**
 * Pages until the listing ends (or `max` pages), starting at `opts.pageToken`. `fetchPage` asks for
 * one page: the source's `fetchUsersPage` unless the test completes each page itself.
 */
export async function listPages(
  src: DirectorySource,
  opts: FetchUsersOptions = {},
  max = 50,
  fetchPage: (o: FetchUsersOptions) => Promise<DirectoryPage> = (o) => src.fetchUsersPage(o),
): Promise<DirectoryPage[]> {
  const pages: DirectoryPage[] = [];
  let pageToken = opts.pageToken;
  do {
    const page = await fetchPage({ ...opts, pageToken });
    pages.push(page);
    pageToken = page.nextPageToken ?? undefined;
  } while (pageToken && pages.length < max);
  return pages;
}
