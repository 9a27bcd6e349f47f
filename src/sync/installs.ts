/**
 * The installs a sync asks for: of the teammates a page created or changed (src/sync/pages.ts), and
 * of those whose groups a pending-groups batch wrote (src/sync/pendingGroups.ts).
 */
import type pg from 'pg';
import { requestTeammateInstalls } from '../jobs/triggers.ts';
import { hasInstallers } from '../integrations/queries.ts';

/**
 * One fan-out job for these teammates, unless the workspace has no integration that installs
 * signatures (a directory synced before any mailbox is connected: the job would find no one to
 * install). Whether it has one is read under the installers lock, which the transaction takes
 * (holdInstallers) before it writes anything and holds to its commit: an integration connected
 * meanwhile either is seen here, or is stored after the transaction commits, and the fan-outs that
 * can find it then find these teammates too (src/integrations/integrations.ts, INSTALLERS_LOCK_KEY).
 */
export async function queueInstalls(client: pg.PoolClient, workspaceId: string, teammateIds: string[]): Promise<void> {
  if (teammateIds.length && (await hasInstallers(client, workspaceId))) await requestTeammateInstalls(client, workspaceId, teammateIds);
}
