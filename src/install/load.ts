/**
 * Everything an install decides from, read in one statement: the address (its teammate, aliases,
 * id at the provider and what the installer keeps about the mailbox), whether the integration still
 * installs it, the signatures assigned best first, and the current installation of the one chosen.
 */
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import type { InstallStatus } from '../installations/installations.ts';
import { additionalDeliveryKinds, installsEmailSql, signatureChoicesManySql, type SignatureChoice } from './recipients.ts';

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
  /** Does the integration still install this address (recipients.ts)? */
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

/** loadInstallInput for many addresses of one integration and kind, in one statement (src/install/fit.ts). */
export async function loadInstallInputs(
  db: Queryable,
  q: { workspaceId: string; emailIds: string[]; integrationId: string; kind: SignatureKind },
  signatureId?: string,
): Promise<InstallInput[]> {
  // A named statement: planned once per connection (its plan costs more than its run).
  const { rows } = await db.query<InstallInput>({
    name: 'install_inputs',
    text: `with wanted as (select e.id, e.teammate_id from unnest($2::uuid[]) as w(id) join emails e on e.id = w.id and e.workspace_id = $1),
          ch as (${signatureChoicesManySql('$1', '(select distinct teammate_id from wanted)')}),
          c as (select teammate_id, json_agg(json_build_object('signature_id', signature_id, 'priority', priority) order by n) as choices,
                       (array_agg(signature_id order by n))[1] as first
                  from ch group by teammate_id)
     select e.id, e.address, e.teammate_id, t.deleted_at is not null as deleted, t.display_name,
            coalesce((select array_agg(a.address order by a.address) from emails a where a.teammate_id = e.teammate_id and a.id <> e.id), '{}') as aliases,
            (select ts.external_id from teammate_sources ts join integrations d on d.id = ts.integration_id
              where ts.teammate_id = e.teammate_id and d.kind = (select kind from integrations where id = $3) limit 1) as external_id,
            (select m.state from mailbox_install_state m where m.email_id = e.id and m.integration_id = $3 and m.workspace_id = $1) as mailbox_state,
            ${installsEmailSql('$3::uuid', '$4')} as routed,
            case when $5::uuid is not null then json_build_array(json_build_object('signature_id', $5::uuid, 'priority', 0))
                 else coalesce(c.choices, '[]') end as choices,
            (select json_build_object('status', i.status, 'content_hash', i.content_hash) from installations i
              where i.workspace_id = $1 and i.email_id = e.id and i.signature_id = coalesce($5::uuid, c.first) and i.kind = $6 and i.integration_id = $3) as current
       from wanted w join emails e on e.id = w.id join teammates t on t.id = e.teammate_id
       left join c on c.teammate_id = e.teammate_id`,
    values: [q.workspaceId, q.emailIds, q.integrationId, additionalDeliveryKinds(), signatureId ?? null, q.kind],
  });
  return rows;
}
