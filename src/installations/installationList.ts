/**
 * Read model: installations as the lists show them, each with its address, its signature and its
 * integration, joined in one statement per page: the list that GET /v1/installations,
 * `sigsync install list` and the console's "Needs attention" show, one address's installations for
 * the console's mailbox page, and the count per status and integration kind that /metrics exposes.
 * It names `installations` with `emails`, `signatures` and `integrations`, and writes nothing
 * (src/installations/installations.ts writes installations; docs/architecture.md "Read models").
 * Each row that needs a fix carries it, from the one text the replay prints (fixes.ts).
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
export async function listInstallations(
  db: Queryable,
  workspaceId: string,
  page: PageWindow,
  filters: InstallationFilters = {},
): Promise<{ rows: InstallationListRow[]; total: number }> {
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
