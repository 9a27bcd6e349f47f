/**
 * Which integrations install an address: a read model over integrations (their kind, status and
 * config) and the teammate aggregate's addresses and directory sources. The recipients of a
 * signature are the primary addresses of its current teammates (src/signatures/choices.ts, who is
 * assigned; which signature wins is decided there too); aliases ride along with their primary
 * address (the Gmail installer writes the signature to each verified alias of the mailbox).
 *
 * - Which integration installs an address: the workspace's `signatures` integrations. A mailbox
 *   integration (Gmail, Outlook) takes an address when its config `domains` lists the address's
 *   domain; without `domains`, the mailbox integration whose provider also lists the teammate in a
 *   directory integration takes it, and a workspace with a single mailbox integration sends
 *   everything there. An integration whose delivery is additional (a Slack DM) applies to every
 *   recipient, in addition to the mailbox, except shared mailboxes (nobody's account: no one to
 *   send a DM to).
 *   The rules do not pick one mailbox over another: a teammate listed by both a Google and a
 *   Microsoft directory, with a Gmail and an Outlook integration and no `domains`, is installed in
 *   both (what a migration between the two needs). `domains` settles such a tie.
 */
import { kindsWhere } from '../../connectors/registry.ts';
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';

export interface InstallTarget {
  emailId: string;
  kind: SignatureKind;
  integrationId: string;
}

/**
 * SQL for the integrations that install the addresses in `emails` (alias e, teammate id column
 * e.teammate_id). The parameter `additional` names the placeholder holding the kinds whose delivery
 * is additional (a Slack DM): they install every address, beside the one mailbox integration chosen
 * by domains, by the directory that lists the teammate, or by being the only one.
 */
const integrationsForEmail = (additional: string) => `
  select i.id from integrations i
   where i.workspace_id = e.workspace_id and i.category = 'signatures' and i.status <> 'disconnected' and i.activated
     and case when i.kind = any(${additional}::text[])
       then not (select st.shared_mailbox from teammates st where st.id = e.teammate_id)
       else (i.config ? 'domains' and lower(split_part(e.address, '@', 2)) in (select lower(d) from jsonb_array_elements_text(i.config->'domains') d))
         or (not i.config ? 'domains' and (
               exists (select 1 from teammate_sources ts join integrations d on d.id = ts.integration_id
                        where ts.teammate_id = e.teammate_id and d.kind = i.kind)
               or (select count(*) from integrations m where m.workspace_id = i.workspace_id and m.category = 'signatures'
                     and m.status <> 'disconnected' and m.activated and m.kind <> all(${additional}::text[])) = 1))
     end`;

/** Kinds whose delivery is additional (ConnectorCapabilities.delivery). */
const additionalKinds = () => kindsWhere('signatures', (c) => c.delivery === 'additional');

/** Install targets for the primary addresses of the given teammates. */
export async function targetsForTeammates(db: Queryable, workspaceId: string, teammateIds: string[], kinds: SignatureKind[]): Promise<InstallTarget[]> {
  const { rows } = await db.query<{ email_id: string; integration_id: string }>(
    `select e.id as email_id, ig.id as integration_id
       from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
       cross join lateral (${integrationsForEmail('$3')}) ig
      where e.workspace_id = $1 and e.teammate_id = any($2::uuid[]) and e.is_primary`,
    [workspaceId, teammateIds, additionalKinds()],
  );
  return rows.flatMap((r) => kinds.map((kind) => ({ emailId: r.email_id, kind, integrationId: r.integration_id })));
}

/**
 * For each address among `emailIds` of the workspace: whether this integration installs it (the
 * rules above), and the teammate's id at the integration's provider (from a directory of the same
 * kind), in one statement for any number of addresses.
 */
export async function mailboxRoutes(
  db: Queryable,
  workspaceId: string,
  emailIds: readonly string[],
  integrationId: string,
): Promise<Map<string, { routed: boolean; externalId: string | null }>> {
  const { rows } = await db.query<{ id: string; routed: boolean; external_id: string | null }>({
    name: 'mailbox_routes',
    text: `select e.id, $3::uuid in (${integrationsForEmail('$4')}) as routed,
                  (select ts.external_id from teammate_sources ts join integrations d on d.id = ts.integration_id
                    where ts.teammate_id = e.teammate_id and d.kind = (select kind from integrations where id = $3) limit 1) as external_id
             from unnest($2::uuid[]) as w(id) join emails e on e.id = w.id and e.workspace_id = $1`,
    values: [workspaceId, emailIds, integrationId, additionalKinds()],
  });
  return new Map(rows.map((r) => [r.id, { routed: r.routed, externalId: r.external_id }]));
}

/** Why an integration installs an address: the routing rule that chose it. */
export interface RoutingReason {
  integration_id: string;
  name: string;
  kind: string;
  rule: 'additional' | 'domains' | 'directory' | 'single_mailbox';
  /** The rule in words, for `sigsync install replay`. */
  explanation: string;
}

/**
 * The integrations that install a primary address of a current teammate (as targetsForTeammates),
 * each with the rule that chose it (the first that applies).
 */
export async function routingFor(db: Queryable, workspaceId: string, emailId: string): Promise<RoutingReason[]> {
  const { rows } = await db.query<Omit<RoutingReason, 'explanation'> & { domain: string }>(
    `select i.id as integration_id, i.name, i.kind, lower(split_part(e.address, '@', 2)) as domain,
            case when i.kind = any($2::text[]) then 'additional'
                 when i.config ? 'domains' then 'domains'
                 when exists (select 1 from teammate_sources ts join integrations d on d.id = ts.integration_id
                               where ts.teammate_id = e.teammate_id and d.kind = i.kind) then 'directory'
                 else 'single_mailbox' end as rule
       from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
       join integrations i on i.id in (${integrationsForEmail('$2')})
      where e.workspace_id = $3 and e.id = $1 and e.is_primary
      order by i.kind, i.name`,
    [emailId, additionalKinds(), workspaceId],
  );
  const words: Record<RoutingReason['rule'], (r: { kind: string; domain: string }) => string> = {
    additional: () => 'its delivery comes beside the mailbox (a Slack DM), for every recipient',
    domains: (r) => `its config "domains" lists ${r.domain}`,
    directory: (r) => `no "domains" in its config, and a ${r.kind} directory lists this teammate`,
    single_mailbox: () => 'no "domains" in its config, and it is the workspace\'s only mailbox integration',
  };
  return rows.map(({ domain, ...r }) => ({ ...r, explanation: words[r.rule]({ kind: r.kind, domain }) }));
}
