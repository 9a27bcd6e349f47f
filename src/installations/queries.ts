/**
 * Reads of the installations aggregate (src/installations/installations.ts writes them): the slots
 * a console retry queues and the installed mailboxes the analytics reports divide by. The lists
 * that show each installation with its address, signature and integration, and the counts per
 * integration kind, are the read model src/installations/installationList.ts (re-exported here).
 */
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';

export { countsByStatus, installationsOfEmail, listInstallations, type InstallationFilters, type InstallationListRow } from './installationList.ts';

/** The slots (address, kind, integration) of these installations of the workspace, once each; ids of other workspaces are left out. */
export async function slotsOfInstallations(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<{ emailId: string; kind: SignatureKind; integrationId: string }[]> {
  const { rows } = await db.query<{ email_id: string; kind: SignatureKind; integration_id: string }>(
    `select distinct email_id, kind, integration_id from installations where workspace_id = $1 and id = any($2::uuid[])`,
    [workspaceId, ids],
  );
  return rows.map((r) => ({ emailId: r.email_id, kind: r.kind, integrationId: r.integration_id }));
}

/** Addresses with the signature installed now (the analytics reports' mailboxes): all signatures' (`null`) or per signature. */
export async function installedMailboxes(db: Queryable, ws: string, signatureIds: string[] | null): Promise<Map<string, number>> {
  const { rows } = await db.query<{ key: string; n: number }>(
    `select coalesce(case when $2::uuid[] is null then '' else signature_id::text end, '') as key, count(distinct email_id)::int as n
       from installations where workspace_id = $1 and status = 'installed' and ($2::uuid[] is null or signature_id = any($2::uuid[]))
      group by 1`,
    [ws, signatureIds],
  );
  return new Map(rows.map((x) => [x.key, x.n]));
}
