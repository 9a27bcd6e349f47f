/**
 * What a directory change sets off, inside the sync's own transaction: teammates whose signature
 * inputs changed (names, addresses, smart-field values, groups, removal) get their mailboxes
 * reinstalled.
 */
import type { Queryable } from '../db/tx.ts';
import { requestTeammateInstalls } from '../install/triggers.ts';

export async function onTeammatesChanged(db: Queryable, workspaceId: string, teammateIds: string[]): Promise<void> {
  await requestTeammateInstalls(db, workspaceId, teammateIds);
}
