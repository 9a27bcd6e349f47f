/**
 * Who gets which signature, and through which integration.
 *
 * - Recipients of a signature: the primary addresses of non-deleted teammates assigned directly,
 *   or through a group or org unit they belong to. Aliases ride along with their primary address
 *   (the Gmail installer writes the signature to each verified alias of the mailbox).
 * - Where a teammate has several signatures, the highest assignment priority wins (ties: the most
 *   recently published, then the id). Destinations hold one signature per kind, so the others get
 *   `not_supported`.
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

export interface SignatureChoice {
  signature_id: string;
  priority: number;
}

/**
 * The signatures assigned to a set of teammates, best first per teammate (columns teammate_id,
 * signature_id, priority and n, the rank: 1 is the winner): the highest priority of any direct or
 * group assignment, then the latest published, then the id; `teammates` is a SQL relation
 * with a column teammate_id. Direct and group assignments are joined apart (each by its index), so
 * that a set of 10,000 teammates costs a few joins, not a scan of the assignments each.
 */
export const signatureChoicesManySql = (workspace: string, teammates: string) => `
    select x.teammate_id, x.signature_id, max(x.priority)::int as priority,
           row_number() over (partition by x.teammate_id order by max(x.priority) desc, s.last_published_at desc nulls last, x.signature_id) as n
      from (select w.teammate_id, a.signature_id, a.priority from ${teammates} w join assignments a on a.teammate_id = w.teammate_id and a.workspace_id = ${workspace}
            union all
            select w.teammate_id, a.signature_id, a.priority from ${teammates} w join memberships m on m.teammate_id = w.teammate_id
              join assignments a on a.group_id = m.group_id and a.workspace_id = ${workspace}) x
      join signatures s on s.id = x.signature_id and s.content is not null
     group by x.teammate_id, x.signature_id, s.last_published_at`;

/**
 * SQL for the signatures assigned to one teammate, best first (columns signature_id, priority), with
 * the workspace and the teammate id given as SQL expressions: signatureChoicesManySql for a set of one,
 * so the order is defined once.
 */
export const signatureChoicesSql = (workspace: string, teammate: string) => `
    select c.signature_id, c.priority from (${signatureChoicesManySql(workspace, `(select (${teammate})::uuid as teammate_id)`)}) c order by c.n`;

/** Signatures assigned to a teammate, best first. */
export async function signaturesFor(db: Queryable, workspaceId: string, teammateId: string): Promise<SignatureChoice[]> {
  const { rows } = await db.query<SignatureChoice>(signatureChoicesSql('$1', '$2'), [workspaceId, teammateId]);
  return rows;
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

/** Teammates a signature is assigned to, directly or through groups and org units. */
export async function assignedTeammates(db: Queryable, workspaceId: string, signatureId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select distinct t.id from assignments a
       left join memberships m on m.group_id = a.group_id
       join teammates t on t.id = coalesce(a.teammate_id, m.teammate_id) and t.deleted_at is null
      where a.workspace_id = $1 and a.signature_id = $2`,
    [workspaceId, signatureId],
  );
  return rows.map((r) => r.id);
}

/**
 * SQL that is true when the integration (a uuid SQL expression) installs the address of the row
 * aliased `e` in `emails`; `additional` names the placeholder holding additionalKinds().
 */
export const installsEmailSql = (integration: string, additional: string) => `${integration} in (${integrationsForEmail(additional)})`;

/** Kinds whose delivery is additional (a Slack DM), for installsEmailSql. */
export const additionalDeliveryKinds = () => additionalKinds();

/** Does this integration still install this address? */
export async function integrationInstallsEmail(db: Queryable, emailId: string, integrationId: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `select 1 from emails e where e.id = $1 and $2::uuid in (${integrationsForEmail('$3')})`,
    [emailId, integrationId, additionalKinds()],
  );
  return (rowCount ?? 0) > 0;
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
export async function routingFor(db: Queryable, emailId: string): Promise<RoutingReason[]> {
  const { rows } = await db.query<Omit<RoutingReason, 'explanation'> & { domain: string }>(
    `select i.id as integration_id, i.name, i.kind, lower(split_part(e.address, '@', 2)) as domain,
            case when i.kind = any($2::text[]) then 'additional'
                 when i.config ? 'domains' then 'domains'
                 when exists (select 1 from teammate_sources ts join integrations d on d.id = ts.integration_id
                               where ts.teammate_id = e.teammate_id and d.kind = i.kind) then 'directory'
                 else 'single_mailbox' end as rule
       from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
       join integrations i on i.id in (${integrationsForEmail('$2')})
      where e.id = $1 and e.is_primary
      order by i.kind, i.name`,
    [emailId, additionalKinds()],
  );
  const words: Record<RoutingReason['rule'], (r: { kind: string; domain: string }) => string> = {
    additional: () => 'its delivery comes beside the mailbox (a Slack DM), for every recipient',
    domains: (r) => `its config "domains" lists ${r.domain}`,
    directory: (r) => `no "domains" in its config, and a ${r.kind} directory lists this teammate`,
    single_mailbox: () => 'no "domains" in its config, and it is the workspace\'s only mailbox integration',
  };
  return rows.map(({ domain, ...r }) => ({ ...r, explanation: words[r.rule]({ kind: r.kind, domain }) }));
}
