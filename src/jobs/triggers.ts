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
import { enqueue, jobs } from './catalogue.ts';

export interface SignatureInstallRequest {
  /** Which kinds to install; all by default. */
  kinds?: SignatureKind[];
  /** Install even where the rendered signature is unchanged. */
  forced: boolean;
}

export async function requestSignatureInstall(db: Queryable, workspaceId: string, signatureId: string, req: SignatureInstallRequest): Promise<void> {
  const kinds = req.kinds ?? ['primary', 'reply', 'internal'];
  // A burst of publishes of one signature coalesces into one fan-out of the latest state (its job key).
  await enqueue(db, jobs.fanoutSignature, { workspaceId, signatureId, kinds, forced: req.forced });
}

export async function requestTeammateInstalls(db: Queryable, workspaceId: string, teammateIds: string[]): Promise<void> {
  if (!teammateIds.length) return;
  await enqueue(db, jobs.fanoutTeammates, { workspaceId, teammateIds });
}

export async function requestIntegrationInstalls(db: Queryable, workspaceId: string, integrationId: string): Promise<void> {
  await enqueue(db, jobs.fanoutIntegration, { workspaceId, integrationId });
}
