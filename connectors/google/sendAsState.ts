/**
 * What the Gmail installer keeps about a mailbox between installs (the engine stores it:
 * InstallOptions.state / onState), so that it writes without listing the send-as addresses first.
 *
 * - A mailbox whose directory entry has no aliases needs no listing: only its primary address is
 *   written (send-as addresses the directory does not know are never written anyway).
 * - A mailbox with aliases is listed when nothing is known about it, and again when the listing is
 *   stale: older than 7 days, or than 1 hour when one of its directory aliases was not verified yet
 *   (so that it is written soon after it is), or when the directory's aliases changed since.
 * - `shown`: the addresses an unfinished install already wrote with one signature (a 429 on the
 *   second address), so that its retry does not write them again unless forced.
 */
import type { GmailSendAs } from './schemas.ts';

export const LISTING_TTL_MS = 7 * 24 * 3600_000;
export const PENDING_LISTING_TTL_MS = 3600_000;

export interface GmailMailboxState {
  v: 1;
  /** When sendAs.list was called (ISO). */
  listedAt: string;
  /** The directory's aliases of the mailbox then (lowercase, sorted). */
  aliases: string[];
  /** The primary send-as address. */
  primary: string;
  /** Directory aliases Gmail lists as verified send-as addresses (lowercase). */
  verified: string[];
  /** Directory aliases Gmail lists as send-as addresses not verified yet (lowercase). */
  pending: string[];
  /** Addresses an unfinished install already wrote with the signature of this hash. */
  shown?: { hash: string; addresses: string[] };
}

export const normalised = (addresses: string[]): string[] => [...new Set(addresses.map((a) => a.toLowerCase()))].sort();

/** The stored state, when it has this shape. */
export function readState(state: unknown): GmailMailboxState | undefined {
  const s = state as Partial<GmailMailboxState> | null | undefined;
  if (
    !s ||
    s.v !== 1 ||
    typeof s.listedAt !== 'string' ||
    typeof s.primary !== 'string' ||
    !Array.isArray(s.aliases) ||
    !Array.isArray(s.verified) ||
    !Array.isArray(s.pending)
  )
    return undefined;
  return s as GmailMailboxState;
}

/** Can the install use this listing for a mailbox with these directory aliases? */
export function isFresh(state: GmailMailboxState | undefined, aliases: string[], now = Date.now()): state is GmailMailboxState {
  if (!state) return false;
  const age = now - Date.parse(state.listedAt);
  if (!(age >= 0 && age < LISTING_TTL_MS)) return false;
  const wanted = normalised(aliases);
  if (wanted.join(',') !== state.aliases.join(',')) return false;
  return !(state.pending.length > 0 && age >= PENDING_LISTING_TTL_MS);
}

/** The state a listing gives, for a mailbox with these directory aliases. */
export function stateFromListing(sendAs: GmailSendAs[], aliases: string[], now = Date.now()): GmailMailboxState {
  const wanted = new Set(normalised(aliases));
  const primary = sendAs.find((s) => s.isPrimary === true)?.sendAsEmail ?? '';
  const listed = sendAs.filter((s) => s.isPrimary !== true && wanted.has(s.sendAsEmail.toLowerCase()));
  return {
    v: 1,
    listedAt: new Date(now).toISOString(),
    aliases: [...wanted],
    primary,
    verified: listed.filter((s) => s.verificationStatus === 'accepted').map((s) => s.sendAsEmail.toLowerCase()),
    pending: listed.filter((s) => s.verificationStatus !== 'accepted').map((s) => s.sendAsEmail.toLowerCase()),
  };
}

/** Addresses already showing this signature (an unfinished install of the same content), unless forced. */
export function shownFor(state: GmailMailboxState | undefined, hash: string, force: boolean): Set<string> {
  if (force || !state?.shown || state.shown.hash !== hash) return new Set();
  return new Set(state.shown.addresses.map((a) => a.toLowerCase()));
}
