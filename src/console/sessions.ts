/**
 * Sign-in to the console, for people (API keys stay with scripts):
 *
 *   sign-in link   `sigsync console link --workspace W [--as ADDRESS]` makes a random token, stores
 *                  sha256 of it with whom it is for (the subject: ADDRESS, by default the CLI's user
 *                  as `cli:USER`), and prints `/console/sign-in?token=...`; it opens one session,
 *                  once, within LINK_TTL_MS (15 minutes).
 *   session        redeeming the link makes a second random token (the cookie) and a CSRF token; the
 *                  session is scoped to the link's workspace and lasts SESSION_TTL_MS (12 hours) or
 *                  until signed out.
 *
 * The session carries the link's subject: the audit trail (src/db/audit.ts) names it as the actor of
 * everything done with the session; opening and ending a session are recorded in the same
 * transaction. Only hashes of the link and cookie tokens are stored. `method` leaves room for signing in with the
 * workspace's own Google or Microsoft account: such a sign-in would end in `openSession` too.
 * The daily `prune` task deletes what can no longer sign anyone in (`pruneConsoleSessions`).
 */
import crypto from 'node:crypto';
import type pg from 'pg';
import { withTx, type Queryable } from '../db/tx.ts';
import { randomToken } from '../db/apiKeys.ts';
import { recordAudit, type Actor } from '../db/audit.ts';

export const LINK_TTL_MS = 15 * 60_000;
export const SESSION_TTL_MS = 12 * 3_600_000;

const LINK_PREFIX = 'sgl_';
const SESSION_PREFIX = 'sgc_';
const TOKEN = /^sg[lc]_[A-Za-z0-9]{43}$/;

const hash = (token: string) => crypto.createHash('sha256').update(token).digest();

export type SignInMethod = 'link' | 'google' | 'microsoft';

export interface ConsoleSession {
  id: string;
  workspaceId: string;
  /** Whom the session is for (the sign-in link's subject). */
  subject: string;
  csrfToken: string;
  expiresAt: Date;
}

/** The audit trail's actor of a console session. */
export function sessionActor(session: Pick<ConsoleSession, 'id' | 'subject'>): Actor {
  return { kind: 'console', name: session.subject, id: session.id };
}

/**
 * A one-time sign-in token for the workspace, for `subject` (by default whoever made it); answers the
 * token (shown once) and when it expires.
 */
export async function createSignInLink(
  db: Queryable,
  workspaceId: string,
  createdBy = '',
  ttlMs = LINK_TTL_MS,
  subject = createdBy,
): Promise<{ token: string; expiresAt: Date }> {
  const token = `${LINK_PREFIX}${randomToken(43)}`;
  const { rows } = await db.query<{ expires_at: Date }>(
    `insert into console_sign_in_links (token_hash, workspace_id, created_by, subject, expires_at) values ($1, $2, $3, $4, now() + $5 * interval '1 millisecond') returning expires_at`,
    [hash(token), workspaceId, createdBy, subject, ttlMs],
  );
  return { token, expiresAt: rows[0]!.expires_at };
}

/** Opens a session for a workspace (after a sign-in method vouched for the person). */
export async function openSession(
  db: Queryable,
  workspaceId: string,
  method: SignInMethod,
  subject: string,
  ttlMs = SESSION_TTL_MS,
): Promise<ConsoleSession & { token: string }> {
  const token = `${SESSION_PREFIX}${randomToken(43)}`;
  const csrfToken = randomToken(32);
  const { rows } = await db.query<{ id: string; expires_at: Date }>(
    `insert into console_sessions (token_hash, workspace_id, method, subject, csrf_token, expires_at)
     values ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond') returning id, expires_at`,
    [hash(token), workspaceId, method, subject, csrfToken, ttlMs],
  );
  return { id: rows[0]!.id, workspaceId, subject, csrfToken, expiresAt: rows[0]!.expires_at, token };
}

/**
 * Redeems a sign-in link: marks it used (one statement, so two browsers racing on one link get one
 * session), opens a session for the link's subject and records `console.sign_in`, in one
 * transaction. Undefined for an unknown, used or expired link.
 */
export async function redeemSignInLink(pool: pg.Pool, token: string): Promise<(ConsoleSession & { token: string }) | undefined> {
  if (!TOKEN.test(token) || !token.startsWith(LINK_PREFIX)) return undefined;
  return withTx(pool, async (c) => {
    const { rows } = await c.query<{ workspace_id: string; created_by: string; subject: string }>(
      `update console_sign_in_links set used_at = now() where token_hash = $1 and used_at is null and expires_at > now() returning workspace_id, created_by, subject`,
      [hash(token)],
    );
    const link = rows[0];
    if (!link) return undefined;
    const session = await openSession(c, link.workspace_id, 'link', link.subject || link.created_by);
    await recordAudit(c, link.workspace_id, sessionActor(session), {
      action: 'console.sign_in',
      targetKind: 'console_session',
      target: session.id,
      details: { link_created_by: link.created_by },
    });
    return session;
  });
}

/** The live session of a cookie token, or undefined. */
export async function findSession(db: Queryable, token: string): Promise<ConsoleSession | undefined> {
  if (!TOKEN.test(token) || !token.startsWith(SESSION_PREFIX)) return undefined;
  const { rows } = await db.query<{ id: string; workspace_id: string; subject: string; csrf_token: string; expires_at: Date }>({
    name: 'console_session_find_subject',
    text: 'select id, workspace_id, subject, csrf_token, expires_at from console_sessions where token_hash = $1 and ended_at is null and expires_at > now()',
    values: [hash(token)],
  });
  const r = rows[0];
  return r ? { id: r.id, workspaceId: r.workspace_id, subject: r.subject, csrfToken: r.csrf_token, expiresAt: r.expires_at } : undefined;
}

/**
 * Ends a session (sign out, or a new sign-in in the same browser: `why`), recording
 * `console.sign_out` in the same transaction when it was live.
 */
export async function endSession(
  pool: pg.Pool,
  session: Pick<ConsoleSession, 'id' | 'workspaceId' | 'subject'>,
  why: 'sign_out' | 'replaced' = 'sign_out',
): Promise<void> {
  await withTx(pool, async (c) => {
    const ended = await c.query('update console_sessions set ended_at = now() where id = $1 and ended_at is null', [session.id]);
    if (ended.rowCount)
      await recordAudit(c, session.workspaceId, sessionActor(session), {
        action: 'console.sign_out',
        targetKind: 'console_session',
        target: session.id,
        details: why === 'replaced' ? { reason: 'signed in again in this browser' } : {},
      });
  });
}

/**
 * Deletes sessions that expired or were signed out, and sign-in links that were used or expired:
 * none of them can sign anyone in again. Answers how many of each went.
 */
export async function pruneConsoleSessions(db: Queryable): Promise<{ sessions: number; links: number }> {
  const sessions = await db.query('delete from console_sessions where expires_at <= now() or ended_at is not null');
  const links = await db.query('delete from console_sign_in_links where expires_at <= now() or used_at is not null');
  return { sessions: sessions.rowCount ?? 0, links: links.rowCount ?? 0 };
}

/** Whether a CSRF header matches the session's token (constant time). */
export function csrfMatches(session: ConsoleSession, header: string | undefined): boolean {
  if (!header) return false;
  const a = Buffer.from(header);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
