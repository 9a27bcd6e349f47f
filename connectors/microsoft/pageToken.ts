/**
 * The Microsoft directory's page tokens (directory.ts): the Graph next link to follow and, in a full
 * listing, the delta token taken before it began, as one opaque string handed to the sync engine.
 */
import { z } from 'zod';
import { parseProvider } from '../types.ts';

/** The page token: the next link to follow and, in a full listing, the delta token taken before it began. */
export const PageToken = z.object({
  next: z.url(),
  delta: z.url().optional(),
  deltaAt: z.string().optional(),
});
export type PageToken = z.infer<typeof PageToken>;

export function encodePageToken(t: PageToken): string {
  return JSON.stringify(t);
}

/** A page token this source handed out, or a bare next link. */
export function decodePageToken(s: string): PageToken {
  let raw: unknown;
  try {
    raw = JSON.parse(s);
  } catch {
    raw = { next: s };
  }
  return parseProvider(PageToken, raw, 'Microsoft page token');
}
