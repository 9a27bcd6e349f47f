/**
 * Changes to teammates made by hand (the API): manual smart-field values, removing a teammate who
 * comes from no directory, removing an alias address. Each change asks for the installs it affects,
 * and a removal writes teammate.deleted, in the caller's transaction. Directory syncs write the same
 * tables set-based, page by page (src/sync/write.ts).
 */
import type { Queryable } from './tx.ts';
import { stopTeammates } from './installations.ts';
import { emitTeammateEvents } from '../events/outbox.ts';
import { requestTeammateInstalls } from '../install/triggers.ts';

/** Locks a live teammate for the rest of the transaction; false when there is none. */
export async function lockTeammate(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return !!(await db.query('select 1 from teammates where workspace_id = $1 and id = $2 and deleted_at is null for update', [workspaceId, id])).rowCount;
}

/**
 * Sets manual values (`value` null clears one) of fields no integration manages, on a teammate
 * locked by `lockTeammate`. Reinstalls the teammate when anything changed; answers whether it did.
 */
export async function setManualValues(db: Queryable, workspaceId: string, teammateId: string, values: readonly { fieldId: string; value: string | null }[]): Promise<boolean> {
  const set = values.filter((v) => v.value !== null);
  const cleared = values.filter((v) => v.value === null).map((v) => v.fieldId);
  const upserted = await db.query(
    `insert into smart_field_values (workspace_id, teammate_id, smart_field_id, value, source)
     select $1, $2, f, v, 'manual' from unnest($3::uuid[], $4::text[]) as x(f, v)
     on conflict (teammate_id, smart_field_id) do update set value = excluded.value, source = 'manual', integration_id = null
      where smart_field_values.workspace_id = $1
        and (smart_field_values.value, smart_field_values.source) is distinct from (excluded.value, 'manual')`,
    [workspaceId, teammateId, set.map((v) => v.fieldId), set.map((v) => v.value)],
  );
  const removed = await db.query('delete from smart_field_values where workspace_id = $1 and teammate_id = $2 and smart_field_id = any($3::uuid[])', [workspaceId, teammateId, cleared]);
  if ((upserted.rowCount ?? 0) + (removed.rowCount ?? 0) === 0) return false;
  await db.query('update teammates set updated_at = now() where workspace_id = $1 and id = $2', [workspaceId, teammateId]);
  await requestTeammateInstalls(db, workspaceId, [teammateId]);
  return true;
}

/** Removes a teammate (soft delete) with teammate.deleted, and stops their installations. False when there is none. */
export async function removeTeammate(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>('update teammates set deleted_at = now() where workspace_id = $1 and id = $2 and deleted_at is null returning id', [workspaceId, id]);
  if (!rows.length) return false;
  await emitTeammateEvents(db, workspaceId, 'teammate.deleted', [id]);
  await stopTeammates(db, workspaceId, [id], { onlyRemoved: false });
  return true;
}

/** Removes one address of a teammate and reinstalls the teammate. */
export async function removeEmail(db: Queryable, workspaceId: string, emailId: string, teammateId: string): Promise<void> {
  await db.query('delete from emails where workspace_id = $1 and id = $2', [workspaceId, emailId]);
  await requestTeammateInstalls(db, workspaceId, [teammateId]);
}
