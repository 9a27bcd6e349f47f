/**
 * Install status in add-in mode, recorded when the add-in fetches: the home of `addin_clients` (which
 * client platform last received which version of an address's signature), and the `installed`
 * transitions of the address's add-in-mode installations (through the installations aggregate).
 *
 * A fetch that answers 200 or 304 means the add-in holds the current version, so every variant it
 * was served moves to `installed` with that content hash. Writes happen only on a change: each
 * process remembers, per address, what it last recorded, so a busy mailbox costs no write per
 * compose. Only the last: a signature that returns to an earlier version (a campaign's end takes
 * its banner out again) was moved to `pending` by the install meanwhile, and its next fetch records
 * it again. What another process recorded is not seen here, so a memory older than
 * CLIENT_REFRESH_MS is written again too.
 */
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../context.ts';
import { transition } from '../installations/installations.ts';
import { withTx } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import { addinIntegrations } from '../integrations/queries.ts';
import { addinSignature, type AddinSignature } from './signatures.ts';

export const PLATFORMS = ['web', 'windows', 'mac', 'ios', 'android', 'unknown'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** A client's `platform` as the add-in reports it; anything else is `unknown`. */
export function platformOf(value: unknown): Platform {
  return typeof value === 'string' && (PLATFORMS as readonly string[]).includes(value) ? (value as Platform) : 'unknown';
}

/** Client versions are kept as reported, within 64 printable ASCII characters. */
export function clientVersionOf(value: unknown): string {
  if (typeof value !== 'string') return '';
  return PRINTABLE.test(value) ? value : value.replace(/[^\x20-\x7e]/g, '').slice(0, 64);
}
const PRINTABLE = /^[\x20-\x7e]{0,64}$/;

const CLIENT_REFRESH_MS = 10 * 60_000;
const recorded = new WeakMap<AppContext, LRUCache<string, number>>();
/** Per address (email id): what this process last recorded as installed, and when. */
const lastInstalled = new WeakMap<AppContext, LRUCache<string, { key: string; at: number }>>();

function memo(ctx: AppContext): LRUCache<string, number> {
  let m = recorded.get(ctx);
  if (!m) recorded.set(ctx, (m = new LRUCache({ max: 100_000 })));
  return m;
}

function installMemo(ctx: AppContext): LRUCache<string, { key: string; at: number }> {
  let m = lastInstalled.get(ctx);
  if (!m) lastInstalled.set(ctx, (m = new LRUCache({ max: 100_000 })));
  return m;
}

const installKeys = new WeakMap<AddinSignature, string>();

/** What an answer installs, as a memo key: made once per render, not per fetch. */
function installKeyOf(s: AddinSignature, emailId: string): string {
  let key = installKeys.get(s);
  if (key === undefined) {
    const served = (Object.keys(s.variants) as SignatureKind[]).map((kind) => `${kind}=${s.variants[kind]!.hash}`);
    installKeys.set(s, (key = `i:${emailId}:${s.signatureId}:${served.join(',')}`));
  }
  return key;
}

/** Records that a client holds the address's current signatures. */
export async function recordFetch(ctx: AppContext, workspaceId: string, s: AddinSignature, client: { platform: Platform; version: string }): Promise<void> {
  const email = s.email;
  if (!email || !s.signatureId) return;
  const m = memo(ctx);
  const installs = installMemo(ctx);
  const installKey = installKeyOf(s, email.id);
  const clientKey = `c:${email.id}:${client.platform}:${client.version}:${s.etag}`;
  const now = Date.now();
  const last = installs.get(email.id);
  const needInstall = last?.key !== installKey || now - last.at > CLIENT_REFRESH_MS;
  const needClient = now - (m.get(clientKey) ?? 0) > CLIENT_REFRESH_MS;
  if (!needInstall && !needClient) return;
  const served = (Object.keys(s.variants) as SignatureKind[]).map((kind) => ({ kind, hash: s.variants[kind]!.hash }));
  const integrations = needInstall ? await addinIntegrations(ctx.pool, workspaceId) : [];
  await withTx(ctx.pool, async (c) => {
    for (const i of integrations) {
      for (const v of served) {
        const key = { workspaceId, emailId: email.id, signatureId: s.signatureId!, kind: v.kind, integrationId: i.id };
        await transition(c, key, { status: 'installed', contentHash: v.hash, html: s.variants[v.kind]!.html, attempted: true });
      }
    }
    if (needClient) {
      await c.query(
        `insert into addin_clients (workspace_id, email_id, platform, client_version, served_hash, last_fetched_at) values ($1, $2, $3, $4, $5, now())
         on conflict (email_id, platform) do update set client_version = excluded.client_version, served_hash = excluded.served_hash, last_fetched_at = now()`,
        [workspaceId, email.id, client.platform, client.version, s.etag],
      );
    }
  });
  if (needInstall) installs.set(email.id, { key: installKey, at: now });
  m.set(clientKey, now);
}

/** Forgets what was recorded (tests that move rows back by hand). */
export function forgetRecordedFetches(ctx: AppContext): void {
  recorded.get(ctx)?.clear();
  lastInstalled.get(ctx)?.clear();
}

/** Per platform: when a client of the address last fetched, which version, and whether it is current. */
export async function clientsOf(ctx: AppContext, workspaceId: string, emailId: string) {
  const { rows } = await ctx.pool.query<{ platform: Platform; client_version: string; served_hash: string; last_fetched_at: Date }>(
    `select platform, client_version, served_hash, last_fetched_at from addin_clients where workspace_id = $1 and email_id = $2 order by platform`,
    [workspaceId, emailId],
  );
  return rows;
}

export interface ClientVersion {
  platform: Platform;
  client_version: string;
  last_fetched_at: Date;
  /** The ETag of what the client last received. */
  served_hash: string;
  /** Whether that is what the add-in serves the address now. */
  current: boolean;
}

/** `clientsOf` with, for each platform, whether its client holds the version the add-in serves now. */
export async function clientVersionsOf(ctx: AppContext, workspaceId: string, email: { id: string; address: string }): Promise<ClientVersion[]> {
  const clients = await clientsOf(ctx, workspaceId, email.id);
  if (!clients.length) return [];
  const current = (await addinSignature(ctx, workspaceId, email.address)).etag;
  return clients.map((c) => ({ ...c, current: c.served_hash === current }));
}
