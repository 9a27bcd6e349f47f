/**
 * Reads of the installations aggregate (src/installations/installations.ts writes them): the list
 * that GET /v1/installations, `sigsync install list` and the console's "Needs attention" show, one
 * address's installations for the console's mailbox page, the slots a console retry queues, and the
 * count per status and integration kind that /metrics exposes. Each row that needs a fix carries
 * it, from the one text the replay prints (fixes.ts).
 */
import type { PageWindow } from '../db/pages.ts';
import type { Queryable } from '../db/tx.ts';
import type { InstallStatus, SignatureKind } from '../domain.ts';
import { fixFor } from './fixes.ts';

export interface InstallationFilters {
  status?: InstallStatus | undefined;
  integrationId?: string | undefined;
  signatureId?: string | undefined;
  /** The address, matched whole and case-insensitively. */
  address?: string | undefined;
}

export interface InstallationListRow {
  id: string;
  status: InstallStatus;
  kind: SignatureKind;
  error_code: string | null;
  error_message: string | null;
  fix: string | null;
  email_id: string;
  address: string;
  teammate_id: string;
  signature_id: string;
  signature_name: string;
  integration_id: string;
  integration_kind: string;
  integration_name: string;
  failing_since: Date | null;
  installed_at: Date | null;
  last_attempt_at: Date | null;
  attempts: number;
  created_at: Date;
  updated_at: Date;
}

/** The WHERE clause of the filters, with $1 the workspace id; its values follow from $2. */
function where(f: InstallationFilters): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const parts = ['s.workspace_id = $1'];
  const add = (sql: (n: string) => string, v: unknown) => {
    values.push(v);
    parts.push(sql(`$${values.length + 1}`));
  };
  if (f.status) add((n) => `s.status = ${n}`, f.status);
  if (f.integrationId) add((n) => `s.integration_id = ${n}::uuid`, f.integrationId);
  if (f.signatureId) add((n) => `s.signature_id = ${n}::uuid`, f.signatureId);
  // The address's id through emails_address_unique (workspace_id, lower(address)), so the list stays on the installations index.
  if (f.address) add((n) => `s.email_id = (select id from emails where workspace_id = $1 and lower(address) = lower(${n}))`, f.address);
  return { sql: parts.join(' and '), values };
}

/**
 * One page of the workspace's installations matching the filters, newest first
 * (`installations_workspace_status_created` serves a status and its order), and the
 * count of all that match.
 */
export async function listInstallations(db: Queryable, workspaceId: string, page: PageWindow, filters: InstallationFilters = {}): Promise<{ rows: InstallationListRow[]; total: number }> {
  const w = where(filters);
  const n = w.values.length;
  const { rows } = await db.query<Omit<InstallationListRow, 'fix'>>(
    `select s.id, s.status, s.kind, s.error_code, s.error_message, s.email_id, e.address, e.teammate_id,
            s.signature_id, sg.name as signature_name, s.integration_id, i.kind as integration_kind, i.name as integration_name,
            s.failing_since, s.installed_at, s.last_attempt_at, s.attempts, s.created_at, s.updated_at
       from (select * from installations s where ${w.sql} order by s.created_at desc, s.id desc limit $${n + 2} offset $${n + 3}) s
       join emails e on e.workspace_id = s.workspace_id and e.id = s.email_id
       join signatures sg on sg.workspace_id = s.workspace_id and sg.id = s.signature_id
       join integrations i on i.workspace_id = s.workspace_id and i.id = s.integration_id
      order by s.created_at desc, s.id desc`,
    [workspaceId, ...w.values, page.limit, page.offset],
  );
  const count = await db.query<{ n: number }>(`select count(*)::int as n from installations s where ${w.sql}`, [workspaceId, ...w.values]);
  return { rows: rows.map((r) => ({ ...r, fix: fixFor(r.status, r.error_code) })), total: count.rows[0]?.n ?? 0 };
}

/** Every installation of one address, with its signature, integration and fix, for the console's mailbox page. */
export async function installationsOfEmail(db: Queryable, workspaceId: string, emailId: string): Promise<Record<string, unknown>[]> {
  const { rows } = await db.query<Record<string, unknown> & { status: string; error_code: string | null }>(
    `select s.id, s.kind, s.status, s.error_code, s.error_message, s.failing_since, s.installed_at, s.attempts, s.last_attempt_at, s.updated_at,
            s.last_provider_response as provider_response, sg.id as signature_id, sg.name as signature_name,
            i.id as integration_id, i.name as integration_name, i.kind as provider
       from installations s
       join integrations i on i.workspace_id = s.workspace_id and i.id = s.integration_id
       join signatures sg on sg.workspace_id = s.workspace_id and sg.id = s.signature_id
      where s.workspace_id = $1 and s.email_id = $2
      order by i.name, s.kind, sg.name`,
    [workspaceId, emailId],
  );
  return rows.map((r) => ({ ...r, fix: fixFor(r.status, r.error_code) }));
}

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
export async function countsByIntegration(db: Queryable, workspaceId: string): Promise<{ integration_id: string; status: InstallStatus; installs: number; mailboxes: number }[]> {
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
export async function slotStates(db: Queryable, q: { workspaceId: string; emailIds: readonly string[]; integrationId: string; kind: SignatureKind }): Promise<Map<string, SlotState>> {
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
export async function slotsOfInstallations(db: Queryable, workspaceId: string, ids: readonly string[]): Promise<{ emailId: string; kind: SignatureKind; integrationId: string }[]> {
  const { rows } = await db.query<{ email_id: string; kind: SignatureKind; integration_id: string }>(
    `select distinct email_id, kind, integration_id from installations where workspace_id = $1 and id = any($2::uuid[])`,
    [workspaceId, ids],
  );
  return rows.map((r) => ({ emailId: r.email_id, kind: r.kind, integrationId: r.integration_id }));
}

/**
 * The number of installations per status and integration kind, over every workspace (for /metrics).
 * An index-only scan of `installations_integration_status` joined to the few integrations.
 */
export async function countsByStatus(db: Queryable): Promise<{ status: InstallStatus; integration_kind: string; n: number }[]> {
  const { rows } = await db.query<{ status: InstallStatus; integration_kind: string; n: number }>(
    `select s.status, i.kind as integration_kind, sum(s.n)::int as n
       from (select integration_id, status, count(*) as n from installations group by integration_id, status) s
       join integrations i on i.id = s.integration_id
      group by s.status, i.kind order by 1, 2`,
  );
  return rows;
}
