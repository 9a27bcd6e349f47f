/**
 * What the Outlook add-in fetches for one address: the signature assigned to it (the highest
 * priority wins), rendered as each variant the add-in may insert (primary; reply and internal where
 * they are published and activated), the workspace's own domains (the add-in picks the internal
 * variant when every recipient is in them), and an ETag over all of it.
 *
 * Renders are kept for ADDIN_CACHE_SECONDS per address (the render cache): a burst of compose
 * windows costs one render, and a change reaches the add-in within that time. A fetch with the
 * current ETag answers 304. An address asked for again late in that time is rendered again in the
 * background while the kept answer is served (see RenderCache), so a busy mailbox never waits for a
 * render, and addresses first asked together do not all expire, and render, at the same moment.
 */
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import pLimit, { type LimitFunction } from 'p-limit';
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { renderForAddress } from '../analytics/addressRender.ts';
import { signatureChoicesFor } from '../signatures/choices.ts';
import { currentAddress, workspaceDomains, type AddressOwner } from '../teammates/addresses.ts';

export interface VariantBody {
  html: string;
  text: string;
  hash: string;
}

export interface AddinSignature {
  /** The address as the workspace knows it (null when it knows no such address). */
  email: { id: string; address: string; teammateId: string; sharedMailbox: boolean } | null;
  signatureId: string | null;
  variants: Partial<Record<SignatureKind, VariantBody>>;
  internalDomains: string[];
  etag: string;
}

const VARIANTS: SignatureKind[] = ['primary', 'reply', 'internal'];

interface EmailRow extends AddressOwner {
  /** The signature assigned to it (the highest priority wins), and its published, activated variants. */
  signature_id: string | null;
  variant_kinds: SignatureKind[];
}

/**
 * The address (src/teammates/addresses.ts), then the signature that wins for it and which of its
 * variants can be served (src/signatures/choices.ts): a render asks only for the variants that exist.
 */
async function findEmail(ctx: AppContext, workspaceId: string, address: string): Promise<EmailRow | undefined> {
  const email = await currentAddress(ctx.pool, workspaceId, address);
  if (!email) return undefined;
  const choices = await signatureChoicesFor(ctx.pool, workspaceId, [{ teammateId: email.teammate_id, groupIds: email.group_ids }], { variants: true });
  const winner = choices.get(email.teammate_id)?.[0];
  return { ...email, signature_id: winner?.signature_id ?? null, variant_kinds: winner?.variant_kinds ?? [] };
}

function etagOf(s: Omit<AddinSignature, 'etag' | 'email'> & { address: string }): string {
  const h = crypto.createHash('sha256');
  h.update(JSON.stringify([s.address.toLowerCase(), s.signatureId, VARIANTS.map((k) => s.variants[k]?.hash ?? null), s.internalDomains]));
  return `"${h.digest('base64url').slice(0, 32)}"`;
}

async function compute(ctx: AppContext, workspaceId: string, address: string, domains: Promise<string[]>): Promise<AddinSignature> {
  const [email, internalDomains] = await Promise.all([findEmail(ctx, workspaceId, address), domains]);
  const variants: AddinSignature['variants'] = {};
  let signatureId: string | null = null;
  const winner = email?.signature_id;
  if (email && winner) {
    const kinds = VARIANTS.filter((k) => k === 'primary' || email.variant_kinds.includes(k));
    const rendered = await Promise.all(
      kinds.map((kind) => renderForAddress(ctx, { workspaceId, teammateId: email.teammate_id, signatureId: winner, kind, emailId: email.id })),
    );
    // No primary signature (installation switched off, content no longer valid): no variants either.
    if (rendered[0]!.installationActivated && rendered[0]!.available) {
      signatureId = winner;
      kinds.forEach((kind, i) => {
        const r = rendered[i]!;
        if (r.installationActivated && r.available) variants[kind] = { html: r.html, text: r.text, hash: r.hash };
      });
    }
  }
  // The asked address, not the stored one: an unknown address and a known one without a signature get the same ETag.
  const body = { signatureId, variants, internalDomains, address };
  return {
    email: email ? { id: email.id, address: email.address, teammateId: email.teammate_id, sharedMailbox: email.shared_mailbox } : null,
    signatureId,
    variants,
    internalDomains,
    etag: etagOf(body),
  };
}

/** Background renders at once per process: the requests' own work comes first. */
const REFRESHES_AT_ONCE = 2;

interface Kept<T> {
  value: Promise<T>;
  /** When it was asked for (ms): it is served until ADDIN_CACHE_SECONDS after, never later. */
  at: number;
  /** From when a request asks for it to be rendered again in the background. */
  refreshAt: number;
  refreshing: boolean;
}

/**
 * The render cache of a process: each address's answer, and each workspace's domains (one query for
 * all its addresses, rather than one per render). Each is served until ADDIN_CACHE_SECONDS after it
 * was asked for, never later. An answer asked for after a random point between 80% and 95% of
 * that time is rendered again in the background (REFRESHES_AT_ONCE at a time), the kept one served
 * meanwhile: a busy address costs a few more renders than on expiry (one per 0.8-0.95 of the time
 * instead of one per time), and never a wait; addresses first asked together drift apart. An
 * answer's domains may be as old as that time when it is rendered, so a new domain of the workspace
 * reaches composers within twice ADDIN_CACHE_SECONDS.
 */
interface RenderCache {
  ttl: number;
  answers: LRUCache<string, Kept<AddinSignature>>;
  domains: LRUCache<string, Kept<string[]>>;
  refresh: LimitFunction;
}

const caches = new WeakMap<AppContext, RenderCache>();
/** The caches count time as the rest of this module does (Date.now), not on the monotonic clock. */
const clock = { now: () => Date.now() };

function cacheOf(ctx: AppContext, ttl: number): RenderCache {
  let c = caches.get(ctx);
  if (!c || c.ttl !== ttl)
    caches.set(
      ctx,
      (c = {
        ttl,
        answers: new LRUCache({ max: 50_000, perf: clock, ttlResolution: 0 }),
        domains: new LRUCache({ max: 10_000, perf: clock, ttlResolution: 0 }),
        refresh: pLimit(REFRESHES_AT_ONCE),
      }),
    );
  return c;
}

function kept<T>(value: Promise<T>, ttl: number): Kept<T> {
  const at = Date.now();
  return { value, at, refreshAt: at + ttl * (0.8 + Math.random() * 0.15), refreshing: false };
}

/** Keeps it until its time is up; a failed one is forgotten. */
function store<T>(cache: LRUCache<string, Kept<T>>, key: string, k: Kept<T>, ttl: number): Kept<T> {
  cache.set(key, k, { ttl: Math.max(1, k.at + ttl - Date.now()) });
  k.value.catch(() => cache.get(key) === k && cache.delete(key));
  return k;
}

function render(ctx: AppContext, c: RenderCache, workspaceId: string, address: string): Kept<AddinSignature> {
  const domains = c.domains.get(workspaceId) ?? store(c.domains, workspaceId, kept(workspaceDomains(ctx.pool, workspaceId), c.ttl), c.ttl);
  return kept(compute(ctx, workspaceId, address, domains.value), c.ttl);
}

/** The address's signatures for the add-in, from the render cache when fresh. */
export function addinSignature(ctx: AppContext, workspaceId: string, address: string): Promise<AddinSignature> {
  const ttl = ctx.config.ADDIN_CACHE_SECONDS * 1000;
  if (ttl <= 0) return compute(ctx, workspaceId, address, workspaceDomains(ctx.pool, workspaceId));
  const c = cacheOf(ctx, ttl);
  const key = `${workspaceId}:${address.toLowerCase()}`;
  const old = c.answers.get(key);
  if (!old) return store(c.answers, key, render(ctx, c, workspaceId, address), ttl).value;
  if (!old.refreshing && Date.now() >= old.refreshAt) {
    old.refreshing = true;
    void c.refresh(async () => {
      // Not when it was forgotten or replaced meanwhile, nor past its time (the next request renders it).
      if (c.answers.peek(key) !== old) return;
      const next = render(ctx, c, workspaceId, address);
      try {
        await next.value;
      } catch {
        old.refreshing = false; // the next request tries again; the kept one still ends on time
        return;
      }
      if (c.answers.peek(key) === old) store(c.answers, key, next, ttl);
    });
  }
  return old.value;
}

/** Forgets kept renders (tests; and a support engineer's `install replay` could call it). */
export function forgetAddinRenders(ctx: AppContext): void {
  caches.delete(ctx);
}

/**
 * The answer's body: the primary signature at the top level (as before variants), and every variant (HTML and text: the add-in inserts the text in
 * plain-text mail).
 */
export function addinBody(s: AddinSignature, askedAddress: string) {
  const primary = s.variants.primary;
  const variants: Record<string, { html: string; text: string; hash: string }> = {};
  for (const k of VARIANTS) {
    const v = s.variants[k];
    if (v) variants[k] = { html: v.html, text: v.text, hash: v.hash };
  }
  return {
    data: {
      email: askedAddress.toLowerCase(),
      signature_id: primary ? s.signatureId : null,
      kind: 'primary' as const,
      html: primary?.html ?? null,
      text: primary?.text ?? null,
      hash: primary?.hash ?? null,
      variants,
      internal_domains: s.internalDomains,
    },
  };
}

const bodies = new WeakMap<AddinSignature, { address: string; json: string }>();

/** addinBody as JSON, made once per render: every fetch of a kept answer sends the same text. */
export function addinBodyJson(s: AddinSignature, askedAddress: string): string {
  const address = askedAddress.toLowerCase();
  let made = bodies.get(s);
  if (made?.address !== address) bodies.set(s, (made = { address, json: JSON.stringify(addinBody(s, askedAddress)) }));
  return made.json;
}
