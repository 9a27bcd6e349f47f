/**
 * Everything an install decides from, for one address or many of one integration and kind: the
 * address (its teammate, aliases and groups: src/teammates/addresses.ts), whether the integration
 * still installs it and the teammate's id at its provider (routing.ts), what the installer keeps
 * about the mailbox and the slot's installations (src/installations/queries.ts), read at once; then
 * the signatures assigned best first (src/signatures/choices.ts), one statement for all the addresses.
 */
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import type { InstallStatus } from '../installations/installations.ts';
import { slotStates } from '../installations/queries.ts';
import { signatureChoicesFor, type SignatureChoice } from '../signatures/choices.ts';
import { installMailboxes } from '../teammates/addresses.ts';
import { mailboxRoutes } from './routing.ts';

export interface InstallInput {
  id: string;
  address: string;
  teammate_id: string;
  deleted: boolean;
  aliases: string[];
  display_name: string;
  external_id: string | null;
  /** What the installer keeps about this mailbox (src/installations/mailboxState.ts). */
  mailbox_state: unknown;
  /** Does the integration still install this address (routing.ts)? */
  routed: boolean;
  /** The signatures assigned, best first (or only the one asked for). */
  choices: SignatureChoice[];
  /** The installation of the first choice in this slot, when it exists. */
  current: { status: InstallStatus; content_hash: string | null } | null;
}

export async function loadInstallInput(
  db: Queryable,
  job: { workspaceId: string; emailId: string; integrationId: string; kind: SignatureKind },
  signatureId?: string,
): Promise<InstallInput | undefined> {
  return (await loadInstallInputs(db, { ...job, emailIds: [job.emailId] }, signatureId))[0];
}

/** loadInstallInput for many addresses of one integration and kind (src/install/fit.ts): the same statements for any number. */
export async function loadInstallInputs(
  db: Queryable,
  q: { workspaceId: string; emailIds: string[]; integrationId: string; kind: SignatureKind },
  signatureId?: string,
): Promise<InstallInput[]> {
  const [mailboxes, routes, states] = await Promise.all([
    installMailboxes(db, q.workspaceId, q.emailIds),
    mailboxRoutes(db, q.workspaceId, q.emailIds, q.integrationId),
    slotStates(db, q),
  ]);
  const assigned = signatureId
    ? undefined
    : await signatureChoicesFor(
        db,
        q.workspaceId,
        mailboxes.map((m) => ({ teammateId: m.teammate_id, groupIds: m.group_ids })),
      );
  return mailboxes.map(({ group_ids: _, ...m }) => {
    const choices = signatureId ? [{ signature_id: signatureId, priority: 0 }] : (assigned!.get(m.teammate_id) ?? []);
    const state = states.get(m.id);
    const current = state?.installations.find((i) => i.signature_id === choices[0]?.signature_id);
    const route = routes.get(m.id);
    return {
      ...m,
      external_id: route?.externalId ?? null,
      mailbox_state: state?.mailbox_state ?? null,
      routed: route?.routed ?? false,
      choices,
      current: current ? { status: current.status, content_hash: current.content_hash } : null,
    };
  });
}
