/**
 * What a directory change sets off, inside the sync's own transaction: teammates whose signature
 * inputs changed (names, addresses, smart-field values, groups, removal) get their mailboxes
 * reinstalled; an integration that got its access back resumes its held-back installs.
 */
import type { Queryable } from '../db/tx.ts';
import { requestIntegrationInstalls, requestTeammateInstalls } from '../install/triggers.ts';

export async function onTeammatesChanged(db: Queryable, workspaceId: string, teammateIds: string[]): Promise<void> {
  await requestTeammateInstalls(db, workspaceId, teammateIds);
}

export async function onIntegrationReconnected(db: Queryable, integration: { id: string; workspace_id: string }): Promise<void> {
  await requestIntegrationInstalls(db, integration.workspace_id, integration.id);
}
