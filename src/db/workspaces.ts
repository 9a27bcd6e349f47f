import type { Queryable } from './tx.ts';

export interface WorkspaceRow {
  id: string;
  name: string;
}

export async function createWorkspace(db: Queryable, name: string): Promise<WorkspaceRow> {
  const { rows } = await db.query<WorkspaceRow>('insert into workspaces (name) values ($1) returning id, name', [name]);
  return rows[0]!;
}

/**
 * Switches event tracking (`event_tracking.enabled`) on or off; whether it changed (false also for
 * an unknown workspace). Callers reinstall in the same transaction (src/analytics/tracking.ts).
 */
export async function setEventTracking(db: Queryable, workspaceId: string, enabled: boolean): Promise<boolean> {
  const { rowCount } = await db.query('update workspaces set event_tracking_enabled = $2, updated_at = now() where id = $1 and event_tracking_enabled <> $2', [workspaceId, enabled]);
  return rowCount === 1;
}
