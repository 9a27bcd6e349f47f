/**
 * The audit trail: who did what in a workspace. The owner of `audit_entries` (append only).
 *
 * Recorded: every console action (sign-in, sign-out, sync now, replay, redeliver) and every API write
 * that changes content, assignments, installs or keys. The caller records in the same transaction
 * as the change when it runs one (the route's `withTx` around the owner's writes, a session opened
 * from a link, a key created by the CLI); an action that calls a provider or queues work outside one
 * transaction (a replay, a redelivery, a sync) records right after it, with its outcome.
 */
import type { PageWindow } from './pages.ts';
import { listPage } from './pages.ts';
import type { Queryable } from './tx.ts';

export type ActorKind = 'console' | 'api_key' | 'cli' | 'system';

/** Who acted: a signed-in person (the session), an API key, the CLI's user, or the service's own scheduled work. */
export interface Actor {
  kind: ActorKind;
  /** The person a sign-in link named, `name (sgs_prefix)` of a key, `cli:user`, the job (`experiment tick`). */
  name: string;
  /** The console session's or the API key's id. */
  id?: string | null;
}

export interface AuditAction {
  /** `signature.publish`, `console.sign_in`, `mailbox.replay`, ... */
  action: string;
  targetKind?: string;
  target?: string;
  details?: Record<string, unknown>;
}

export interface AuditEntryRow {
  id: string;
  at: Date;
  actor_kind: ActorKind;
  actor: string;
  actor_id: string | null;
  action: string;
  target_kind: string;
  target: string;
  details: Record<string, unknown>;
}

const MAX_TEXT = 500;

/** Records one entry for the workspace, in `db`'s transaction when it is one. */
export async function recordAudit(db: Queryable, workspaceId: string, actor: Actor, a: AuditAction): Promise<void> {
  await db.query(
    `insert into audit_entries (workspace_id, actor_kind, actor, actor_id, action, target_kind, target, details) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      workspaceId,
      actor.kind,
      actor.name.slice(0, MAX_TEXT),
      actor.id ?? null,
      a.action,
      a.targetKind ?? '',
      (a.target ?? '').slice(0, MAX_TEXT),
      JSON.stringify(a.details ?? {}),
    ],
  );
}

/** One page of the workspace's entries, newest first. */
export async function listAudit(db: Queryable, workspaceId: string, page: PageWindow): Promise<{ rows: AuditEntryRow[]; total: number }> {
  return listPage<AuditEntryRow>(
    db,
    workspaceId,
    page,
    'id, at, actor_kind, actor, actor_id, action, target_kind, target, details',
    'from audit_entries where workspace_id = $1',
    'at desc, id desc',
  );
}
