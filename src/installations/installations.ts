/**
 * The installations aggregate: the only module that writes `installations`. Every status change,
 * of one row or in bulk, happens here, with its event in the caller's transaction.
 *
 * A single transition is one conditional UPDATE (an upsert for a row seen for the first time) that
 * locks the row, so concurrent workers agree on the previous status; signature.installation.failed
 * is written in the same transaction, only when the row moves into `failed` from any other status.
 * Staying failed writes nothing; a success followed by a new failure writes it again. The bulk
 * changes (a removed teammate's rows stop, rows held back while access is lost, released after a
 * reconnect) move no row into `failed`, so they write no event.
 */
import type { Queryable } from '../db/tx.ts';
import { emitEvent } from '../db/outbox.ts';
import type { InstallStatus, SignatureKind } from '../domain.ts';

export type { InstallStatus };

export interface InstallationKey {
  workspaceId: string;
  emailId: string;
  signatureId: string;
  kind: SignatureKind;
  integrationId: string;
}

/**
 * What signature.installation.failed names besides the key, as the caller (the install engine)
 * read them: the address and its teammate, the signature's name, the integration's kind.
 */
export interface FailureSubject {
  address: string;
  teammateId: string;
  signatureName: string;
  integrationKind: string;
}

interface TransitionFields {
  errorCode?: string | null;
  errorMessage?: string | null;
  contentHash?: string | null;
  html?: string | null;
  providerResponse?: unknown;
  /** Count this as a provider attempt. */
  attempted?: boolean;
}

/** A status to move to; a move into `failed` carries what its event names. */
export type Transition = TransitionFields &
  ({ status: Exclude<InstallStatus, 'failed'>; subject?: FailureSubject } | { status: 'failed'; subject: FailureSubject });

export interface TransitionResult {
  id: string;
  previous: InstallStatus | null;
  status: InstallStatus;
}

/**
 * Moves one installation to a status, writing signature.installation.failed on entry into `failed`.
 * Call it inside a transaction: the row is created if missing, then locked, so concurrent workers
 * see each other's status and the failure event is written once.
 */
export async function transition(db: Queryable, key: InstallationKey, t: Transition): Promise<TransitionResult> {
  await db.query(
    `insert into installations (workspace_id, email_id, signature_id, kind, integration_id, status)
     values ($1, $2, $3, $4, $5, 'pending') on conflict (email_id, signature_id, kind, integration_id) do nothing`,
    [key.workspaceId, key.emailId, key.signatureId, key.kind, key.integrationId],
  );
  const prev = (
    await db.query<{ id: string; status: InstallStatus }>(
      `select id, status from installations
        where workspace_id = $1 and email_id = $2 and signature_id = $3 and kind = $4 and integration_id = $5 for update`,
      [key.workspaceId, key.emailId, key.signatureId, key.kind, key.integrationId],
    )
  ).rows[0]!;
  const installed = t.status === 'installed';
  await db.query(
    `update installations i set
        status = $2,
        error_code = $3,
        error_message = $4,
        failing_since = case when $2 = 'failed' then coalesce(i.failing_since, now()) end,
        content_hash = case when $7 then $5 else i.content_hash end,
        installed_at = case when $7 then now() else i.installed_at end,
        last_html = case when $7 then $6 else i.last_html end,
        last_provider_response = coalesce($8::jsonb, i.last_provider_response),
        attempts = i.attempts + case when $9 then 1 else 0 end,
        last_attempt_at = case when $9 then now() else i.last_attempt_at end
      where i.id = $1
        and ((i.status, i.error_code, i.error_message) is distinct from ($2, $3, $4)
             or ($7 and i.content_hash is distinct from $5) or $9)`,
    [
      prev.id,
      t.status,
      t.errorCode ?? null,
      t.errorMessage ?? null,
      t.contentHash ?? null,
      t.html ?? null,
      installed,
      t.providerResponse === undefined ? null : JSON.stringify(t.providerResponse),
      t.attempted ?? false,
    ],
  );
  if (t.status === 'failed' && prev.status !== 'failed') await emitFailed(db, key, t.errorCode ?? 'unknown', t.subject);
  return { id: prev.id, previous: prev.status, status: t.status };
}

/**
 * The provider accepted the signature: the same change as transition(..., {status: 'installed',
 * attempted: true}) in one statement, without a transaction of its own (entering `installed` writes
 * no event). The row is locked by the statement, so concurrent workers still agree on `previous`.
 */
export async function transitionInstalled(
  db: Queryable,
  key: InstallationKey,
  t: { contentHash: string; html: string; providerResponse: unknown },
): Promise<TransitionResult> {
  const { rows } = await db.query<{ id: string; previous: InstallStatus | null }>({
    name: 'installation_installed',
    text: `with prev as (
       select id, status from installations
        where workspace_id = $1 and email_id = $2 and signature_id = $3 and kind = $4 and integration_id = $5 for update
     ), up as (
       insert into installations as i (workspace_id, email_id, signature_id, kind, integration_id, status, content_hash, installed_at, last_html, last_provider_response, attempts, last_attempt_at)
       values ($1, $2, $3, $4, $5, 'installed', $6, now(), $7, $8::jsonb, 1, now())
       on conflict (email_id, signature_id, kind, integration_id) do update set
         status = 'installed', error_code = null, error_message = null, failing_since = null,
         content_hash = excluded.content_hash, installed_at = now(), last_html = excluded.last_html,
         last_provider_response = coalesce(excluded.last_provider_response, i.last_provider_response),
         attempts = i.attempts + 1, last_attempt_at = now()
       returning i.id
     )
     select up.id, (select status from prev) as previous from up`,
    values: [
      key.workspaceId,
      key.emailId,
      key.signatureId,
      key.kind,
      key.integrationId,
      t.contentHash,
      t.html,
      t.providerResponse === undefined ? null : JSON.stringify(t.providerResponse),
    ],
  });
  const row = rows[0]!;
  return { id: row.id, previous: row.previous, status: 'installed' };
}

async function emitFailed(db: Queryable, key: InstallationKey, errorCode: string, r: FailureSubject): Promise<void> {
  await emitEvent(db, key.workspaceId, 'signature.installation.failed', {
    error_code: errorCode,
    email: { uuid: key.emailId, address: r.address },
    teammate_uuid: r.teammateId,
    signature: {
      uuid: key.signatureId,
      name: r.signatureName,
      kind: key.kind === 'primary' ? 'primary' : key.kind === 'reply' ? 'reply_variant' : 'internal_variant',
    },
    integration: { uuid: key.integrationId, kind: r.integrationKind },
  });
}

/** The status and content hash of one installation, when it exists. */
export async function currentInstallation(db: Queryable, key: InstallationKey): Promise<{ status: InstallStatus; content_hash: string | null } | undefined> {
  const { rows } = await db.query<{ status: InstallStatus; content_hash: string | null }>(
    `select status, content_hash from installations
      where workspace_id = $1 and email_id = $2 and signature_id = $3 and kind = $4 and integration_id = $5`,
    [key.workspaceId, key.emailId, key.signatureId, key.kind, key.integrationId],
  );
  return rows[0];
}

const STOPPED = `status = 'not_installed', error_code = null, error_message = null, failing_since = null`;

/** Nothing is installed in this slot (address, kind, integration) any more: no signature applies. */
export async function stopSlot(db: Queryable, slot: Omit<InstallationKey, 'signatureId'>): Promise<void> {
  await db.query(
    `update installations set ${STOPPED}
      where workspace_id = $1 and email_id = $2 and kind = $3 and integration_id = $4 and status <> 'not_installed'`,
    [slot.workspaceId, slot.emailId, slot.kind, slot.integrationId],
  );
}

/** The installations of these addresses stop (their teammates were removed: src/teammates/ lists their addresses). */
export async function stopAddresses(db: Queryable, workspaceId: string, emailIds: readonly string[]): Promise<void> {
  if (!emailIds.length) return;
  await db.query(
    `update installations set ${STOPPED}
      where workspace_id = $1 and email_id = any($2::uuid[]) and status <> 'not_installed'`,
    [workspaceId, emailIds],
  );
}

/** The integration lost access: its installs still waiting are held back, with no provider call. */
export async function holdPendingAsAccessLost(db: Queryable, workspaceId: string, integrationId: string): Promise<void> {
  await db.query(`update installations set status = 'access_lost' where workspace_id = $1 and integration_id = $2 and status = 'pending'`, [
    workspaceId,
    integrationId,
  ]);
}

/** The integration has access again: the installs held back become pending; returns their slots, once each. */
export async function releaseAccessLost(
  db: Queryable,
  workspaceId: string,
  integrationId: string,
): Promise<{ emailId: string; kind: SignatureKind; integrationId: string }[]> {
  const { rows } = await db.query<{ email_id: string; kind: SignatureKind }>(
    `update installations set status = 'pending', error_code = null, error_message = null
      where workspace_id = $1 and integration_id = $2 and status = 'access_lost'
      returning email_id, kind`,
    [workspaceId, integrationId],
  );
  return [...new Map(rows.map((r) => [`${r.email_id}:${r.kind}`, { emailId: r.email_id, kind: r.kind, integrationId }])).values()];
}
