/**
 * What starts installs. Each trigger enqueues a fan-out job in the caller's transaction (so a
 * publish and its installs commit together); the fan-out resolves recipients and enqueues one
 * install job per email and kind (src/install/fanout.ts).
 *
 *   publish / variant publish      -> requestSignatureInstall(..., { forced: false })
 *   POST /v1/signatures/{id}/install -> requestSignatureInstall(..., { forced: true })
 *   campaign start / end / pause   -> requestSignatureInstall for each targeted signature
 *   directory sync changed people  -> requestTeammateInstalls
 *   integration reconnected        -> requestIntegrationInstalls
 */
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';

async function addJob(db: Queryable, task: string, payload: unknown, jobKey: string): Promise<void> {
  await db.query(`select graphile_worker.add_job($1, $2::json, job_key := $3, max_attempts := 10)`, [task, JSON.stringify(payload), jobKey]);
}

export interface SignatureInstallRequest {
  /** Which kinds to install; all by default. */
  kinds?: SignatureKind[];
  /** Install even where the rendered signature is unchanged. */
  forced: boolean;
}

export async function requestSignatureInstall(db: Queryable, workspaceId: string, signatureId: string, req: SignatureInstallRequest): Promise<void> {
  const kinds = req.kinds ?? ['primary', 'reply', 'internal'];
  // A burst of publishes of one signature coalesces into one fan-out of the latest state.
  await addJob(db, 'fanout_signature', { workspaceId, signatureId, kinds, forced: req.forced }, `fanout:${signatureId}:${kinds.join(',')}:${req.forced ? 'forced' : 'changed'}`);
}

export async function requestTeammateInstalls(db: Queryable, workspaceId: string, teammateIds: string[]): Promise<void> {
  if (!teammateIds.length) return;
  await db.query(`select graphile_worker.add_job('fanout_teammates', $1::json, max_attempts := 10)`, [JSON.stringify({ workspaceId, teammateIds })]);
}

export async function requestIntegrationInstalls(db: Queryable, workspaceId: string, integrationId: string): Promise<void> {
  await addJob(db, 'fanout_integration', { workspaceId, integrationId }, `fanout-integration:${integrationId}`);
}
