import type { Queryable } from './tx.ts';

export interface WorkspaceRow {
  id: string;
  name: string;
}

export async function createWorkspace(db: Queryable, name: string): Promise<WorkspaceRow> {
  const { rows } = await db.query<WorkspaceRow>('insert into workspaces (name) values ($1) returning id, name', [name]);
  return rows[0]!;
}
