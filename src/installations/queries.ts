/**
 * Reads of the installations aggregate (src/installations/installations.ts writes them): the slots
 * a console retry queues and the installed mailboxes the analytics reports divide by. The lists
 * that show each installation with its address, signature and integration, and the counts per
 * integration kind, are the read model src/installations/installationList.ts (re-exported here).
 */
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import type { InstallStatus } from './installations.ts';

export { countsByStatus, installationsOfEmail, listInstallations, type InstallationFilters, type InstallationListRow } from './installationList.ts';

export interface MailboxInstallRow {
  signature_id: string;
  integration_id: string;
  kind: SignatureKind;
  status: InstallStatus;
  /** The error code, '' when none. */
  error: string;
  message: string | null;
  failing_since: Date | null;
  installed_at: Date | null;
  attempts: number;
  /** The first 12 characters of the installed content's hash, '' when none. */
  hash: string;
}

/** Every installation of one address, unordered: `sigsync install status` names their signatures and integrations through their owners. */
export async function installationsOfMailbox(db: Queryable, workspaceId: string, emailId: string): Promise<MailboxInstallRow[]> {
  const { rows } = await db.query<MailboxInstallRow>(
    `select signature_id, integration_id, kind, status, coalesce(error_code, '') as error, error_message as message,
            failing_since, installed_at, attempts, left(coalesce(content_hash, ''), 12) as hash
       from installations where workspace_id = $1 and email_id = $2`,
    [workspaceId, emailId],
  );
  return rows;
}

/** The workspace's installations per integration and status: how many, and of how many addresses. */
export async function countsByIntegration(
  db: Queryable,
  workspaceId: string,
): Promise<{ integration_id: string; status: InstallStatus; installs: number; mailboxes: number }[]> {
  const { rows } = await db.query<{ integration_id: string; status: InstallStatus; installs: number; mailboxes: number }>(
    `select integration_id, status, count(*)::int as installs, count(distinct email_id)::int as mailboxes
       from installations where workspace_id = $1 group by integration_id, status`,
    [workspaceId],
  );
  return rows;
}

/** What an install of one slot (an address of `emailIds`, one integration and kind) reads of this aggregate. */
export interface SlotState {
  /** What the installer keeps about the mailbox (mailboxState.ts). */
  mailbox_state: unknown;
  /** The slot's installation of each signature. */
  installations: { signature_id: string; status: InstallStatus; content_hash: string | null }[];
}

/** SlotState of each address among `emailIds` for one integration and kind, in one (named) statement. */
export async function slotStates(
  db: Queryable,
  q: { workspaceId: string; emailIds: readonly string[]; integrationId: string; kind: SignatureKind },
): Promise<Map<string, SlotState>> {
  const { rows } = await db.query<SlotState & { email_id: string }>({
    name: 'install_slot_states',
    text: `select w.id as email_id,
                  (select m.state from mailbox_install_state m where m.email_id = w.id and m.integration_id = $3 and m.workspace_id = $1) as mailbox_state,
                  coalesce((select json_agg(json_build_object('signature_id', i.signature_id, 'status', i.status, 'content_hash', i.content_hash)) from installations i
                             where i.workspace_id = $1 and i.email_id = w.id and i.kind = $4 and i.integration_id = $3), '[]') as installations
             from unnest($2::uuid[]) as w(id)`,
    values: [q.workspaceId, q.emailIds, q.integrationId, q.kind],
  });
  return new Map(rows.map(({ email_id, ...state }) => [email_id, state]));
}

/** The last attempt of an address's installations of one kind (of one signature, when given), latest first: what the support replay compares with. */
export async function lastAttempts(db: Queryable, q: { workspaceId: string; emailId: string; kind: SignatureKind; signatureId?: string | undefined }) {
  const { rows } = await db.query<{
    integration_id: string;
    last_html: string | null;
    status: InstallStatus;
    error_code: string | null;
    error_message: string | null;
    failing_since: Date | null;
    attempts: number;
  }>(
    `select integration_id, last_html, status, error_code, error_message, failing_since, attempts
       from installations where workspace_id = $1 and email_id = $2 and kind = $3 ${q.signatureId ? 'and signature_id = $4' : ''}
      order by updated_at desc`,
    q.signatureId ? [q.workspaceId, q.emailId, q.kind, q.signatureId] : [q.workspaceId, q.emailId, q.kind],
  );
  return rows;
}

/** The slots (address, kind, integration) of these installations of the workspace, once each; ids of other workspaces are left out. */
export async function slotsOfInstallations(
  db: Queryable,
  workspaceId: string,
  ids: readonly string[],
): Promise<{ emailId: string; kind: SignatureKind; integrationId: string }[]> {
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
