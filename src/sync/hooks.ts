/**
 * What a directory change sets off, inside the sync's own transaction. Teammates whose signature
 * inputs changed get their mailboxes reinstalled by the install pipeline.
 */
import type { Queryable } from '../db/tx.ts';

export async function onTeammatesChanged(_db: Queryable, _workspaceId: string, _teammateIds: string[]): Promise<void> {
  // Installs are wired in by the install pipeline.
}

/** An integration whose access was lost is back: its held-back installs are queued again. */
export async function onIntegrationReconnected(_db: Queryable, _integration: { id: string; workspace_id: string }): Promise<void> {
  // Installs are wired in by the install pipeline.
}
