/**
 * What the Outlook add-in fetches for one address: the signature assigned to it (the highest
 * priority wins), rendered as each variant the add-in may insert (primary; reply and internal where
 * they are published and activated), the workspace's own domains (the add-in picks the internal
 * variant when every recipient is in them), and an ETag over all of it.
 *
 * Renders are kept for ADDIN_CACHE_SECONDS per address (the render cache): a burst of compose
 * windows costs one render, and a change reaches the add-in within that time. A fetch with the
 * current ETag answers 304.
 */
import crypto from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../context.ts';
import type { SignatureKind } from '../domain.ts';
import { renderForInstall } from '../install/content.ts';
import { signaturesFor } from '../install/recipients.ts';

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

interface EmailRow {
  id: string;
  address: string;
  teammate_id: string;
  shared_mailbox: boolean;
}

async function findEmail(ctx: AppContext, workspaceId: string, address: string): Promise<EmailRow | undefined> {
  const { rows } = await ctx.pool.query<EmailRow>({
    name: 'addin_email',
    text: `select e.id, e.address, e.teammate_id, t.shared_mailbox from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
            where e.workspace_id = $1 and lower(e.address) = lower($2) limit 1`,
    values: [workspaceId, address],
  });
  return rows[0];
}

/** The domains of the workspace's current addresses, lowercase. */
async function workspaceDomains(ctx: AppContext, workspaceId: string): Promise<string[]> {
  const { rows } = await ctx.pool.query<{ d: string }>({
    name: 'addin_domains',
    text: `select distinct lower(split_part(e.address, '@', 2)) as d from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
            where e.workspace_id = $1 order by 1`,
    values: [workspaceId],
  });
  return rows.map((r) => r.d);
}

function etagOf(s: Omit<AddinSignature, 'etag' | 'email'> & { address: string }): string {
  const h = crypto.createHash('sha256');
  h.update(JSON.stringify([s.address.toLowerCase(), s.signatureId, VARIANTS.map((k) => s.variants[k]?.hash ?? null), s.internalDomains]));
  return `"${h.digest('base64url').slice(0, 32)}"`;
}

async function compute(ctx: AppContext, workspaceId: string, address: string): Promise<AddinSignature> {
  const [email, internalDomains] = await Promise.all([findEmail(ctx, workspaceId, address), workspaceDomains(ctx, workspaceId)]);
  const variants: AddinSignature['variants'] = {};
  let signatureId: string | null = null;
  const winner = email ? (await signaturesFor(ctx.pool, workspaceId, email.teammate_id))[0] : undefined;
  if (email && winner) {
    const rendered = await Promise.all(
      VARIANTS.map((kind) => renderForInstall(ctx, { workspaceId, teammateId: email.teammate_id, signatureId: winner.signature_id, kind, emailId: email.id })),
    );
    // No primary signature (installation switched off, content no longer valid): no variants either.
    if (rendered[0]!.installationActivated && rendered[0]!.available) {
      signatureId = winner.signature_id;
      VARIANTS.forEach((kind, i) => {
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

const caches = new WeakMap<AppContext, LRUCache<string, Promise<AddinSignature>>>();

/** The address's signatures for the add-in, from the render cache when fresh. */
export function addinSignature(ctx: AppContext, workspaceId: string, address: string): Promise<AddinSignature> {
  const ttl = ctx.config.ADDIN_CACHE_SECONDS * 1000;
  if (ttl <= 0) return compute(ctx, workspaceId, address);
  let cache = caches.get(ctx);
  if (!cache) caches.set(ctx, (cache = new LRUCache({ max: 50_000, ttl })));
  const key = `${workspaceId}:${address.toLowerCase()}`;
  const kept = cache.get(key);
  if (kept) return kept;
  const p = compute(ctx, workspaceId, address);
  cache.set(key, p);
  p.catch(() => cache.delete(key));
  return p;
}

/** Forgets kept renders (tests; and a support engineer's `install replay` could call it). */
export function forgetAddinRenders(ctx: AppContext): void {
  caches.get(ctx)?.clear();
}

/** The answer's body: the primary signature at the top level (as before variants), and every variant. */
export function addinBody(s: AddinSignature, askedAddress: string) {
  const primary = s.variants.primary;
  const variants: Record<string, { html: string; hash: string }> = {};
  for (const k of VARIANTS) {
    const v = s.variants[k];
    if (v) variants[k] = { html: v.html, hash: v.hash };
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
