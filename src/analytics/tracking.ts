/**
 * The workspace switch `event_tracking.enabled`. When it changes, every published signature of the
 * workspace is installed again (not forced) in the same transaction: installed HTML gains or loses
 * its tracked links, and mailboxes whose HTML does not change are not written.
 */
import type pg from 'pg';
import { withTx } from '../db/tx.ts';
import { setEventTracking } from '../db/workspaces.ts';
import { requestSignatureInstall } from '../jobs/triggers.ts';
import { publishedSignatureIds } from '../signatures/queries.ts';

/** Whether the setting changed (false also for an unknown workspace). */
export async function switchEventTracking(pool: pg.Pool, workspaceId: string, enabled: boolean): Promise<boolean> {
  return withTx(pool, async (c) => {
    if (!(await setEventTracking(c, workspaceId, enabled))) return false;
    for (const id of await publishedSignatureIds(c, workspaceId)) await requestSignatureInstall(c, workspaceId, id, { forced: false });
    return true;
  });
}
