/**
 * What a mailbox installer learned about one mailbox (`mailbox_install_state`, owned here): for
 * Gmail, the mailbox's send-as addresses as last listed, so that an install writes without reading
 * first. The connector decides what it keeps and when it is stale (MailboxInstaller.install gets
 * the last state and reports a new one); this module only stores it. Read with the address in the
 * install's first reads (queries.ts slotStates, src/install/load.ts), written only when the connector reports a change.
 */
import type { Queryable } from '../db/tx.ts';

export interface MailboxStateKey {
  workspaceId: string;
  emailId: string;
  integrationId: string;
}

/** Stores the connector's new state for the mailbox, or forgets it (null). */
export async function saveMailboxState(db: Queryable, key: MailboxStateKey, state: unknown): Promise<void> {
  if (state === null || state === undefined) {
    await db.query('delete from mailbox_install_state where workspace_id = $1 and email_id = $2 and integration_id = $3', [
      key.workspaceId,
      key.emailId,
      key.integrationId,
    ]);
    return;
  }
  await db.query(
    `insert into mailbox_install_state (workspace_id, email_id, integration_id, state) values ($1, $2, $3, $4)
     on conflict (email_id, integration_id) do update set state = excluded.state, updated_at = now()
      where mailbox_install_state.workspace_id = excluded.workspace_id`,
    [key.workspaceId, key.emailId, key.integrationId, JSON.stringify(state)],
  );
}
