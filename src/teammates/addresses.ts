/**
 * Reads of the teammate aggregate about addresses and who they belong to (src/teammates/teammates.ts
 * writes them): an address as the add-in and the support replay look it up, the mailboxes an install
 * reads, the groups a teammate is in (what group assignments reach), the workspace's domains, and
 * the teammates a directory knows by an external id.
 */
import type { Queryable } from '../db/tx.ts';

/**
 * The groups and org units of the teammate `teammate` (an SQL expression) of the workspace
 * `workspace`: the union of its sources' arrays, sorted, '{}' for none.
 */
function groupIdsOf(workspace: string, teammate: string): string {
  return `coalesce((select array_agg(distinct g order by g) from teammate_sources ts cross join unnest(ts.group_ids) g
                     where ts.workspace_id = ${workspace} and ts.teammate_id = ${teammate}), '{}')`;
}

/** A teammate and the groups and org units it belongs to (what a group assignment reaches). */
export interface Member {
  teammateId: string;
  groupIds: string[];
}

/** The groups each teammate belongs to, one entry per teammate asked (deleted ones included), in one statement. */
export async function membersOf(db: Queryable, workspaceId: string, teammateIds: readonly string[]): Promise<Member[]> {
  const { rows } = await db.query<{ id: string; group_ids: string[] }>(
    `select t.id, ${groupIdsOf('$1', 't.id')} as group_ids from unnest($2::uuid[]) as t(id)`,
    [workspaceId, [...new Set(teammateIds)]],
  );
  return rows.map((r) => ({ teammateId: r.id, groupIds: r.group_ids }));
}

/** The current teammates among `teammateIds` and the members of `groupIds` (each once). */
export async function currentTeammatesOf(
  db: Queryable,
  workspaceId: string,
  q: { teammateIds: readonly string[]; groupIds: readonly string[] },
): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `select distinct t.id from teammates t
      where t.workspace_id = $1 and t.deleted_at is null
        and (t.id = any($2::uuid[]) or t.id in (select ts.teammate_id from teammate_sources ts where ts.workspace_id = $1 and ts.group_ids && $3::uuid[]))`,
    [workspaceId, q.teammateIds, q.groupIds],
  );
  return rows.map((r) => r.id);
}

/** An address of a current teammate as the add-in asks for it (case-insensitive), with the teammate's groups. */
export interface AddressOwner {
  id: string;
  address: string;
  teammate_id: string;
  shared_mailbox: boolean;
  group_ids: string[];
}

/** The address (case-insensitive) of a current teammate of the workspace, one statement. */
export async function currentAddress(db: Queryable, workspaceId: string, address: string): Promise<AddressOwner | undefined> {
  const { rows } = await db.query<AddressOwner>({
    name: 'addin_email',
    text: `select e.id, e.address, e.teammate_id, t.shared_mailbox,
                  ${groupIdsOf('e.workspace_id', 'e.teammate_id')} as group_ids
             from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
            where e.workspace_id = $1 and lower(e.address) = lower($2) limit 1`,
    values: [workspaceId, address],
  });
  return rows[0];
}

/** The domains of the workspace's current addresses, lowercase, sorted. */
export async function workspaceDomains(db: Queryable, workspaceId: string): Promise<string[]> {
  const { rows } = await db.query<{ d: string }>({
    name: 'addin_domains',
    text: `select distinct lower(split_part(e.address, '@', 2)) as d from emails e join teammates t on t.id = e.teammate_id and t.deleted_at is null
            where e.workspace_id = $1 order by 1`,
    values: [workspaceId],
  });
  return rows.map((r) => r.d);
}

export interface MailboxRef {
  id: string;
  workspace_id: string;
  address: string;
  teammate_id: string;
  display_name: string;
  deleted_at: Date | null;
}

/** The mailboxes with this address (case-insensitive), in one workspace or, for the operator's CLI, in all. */
export async function findMailboxes(db: Queryable, address: string, workspaceId?: string): Promise<MailboxRef[]> {
  const { rows } = await db.query<MailboxRef>(
    `select e.id, e.workspace_id, e.address, e.teammate_id, t.display_name, t.deleted_at
       from emails e join teammates t on t.id = e.teammate_id
      where lower(e.address) = lower($1) ${workspaceId ? 'and e.workspace_id = $2' : ''}`,
    workspaceId ? [address, workspaceId] : [address],
  );
  return rows;
}

/** An address an install reads: its teammate (removed or not), the other addresses (aliases) and the teammate's groups. */
export interface InstallMailbox {
  id: string;
  address: string;
  teammate_id: string;
  deleted: boolean;
  display_name: string;
  aliases: string[];
  group_ids: string[];
}

/** The addresses among `emailIds` of the workspace, in one (named) statement. */
export async function installMailboxes(db: Queryable, workspaceId: string, emailIds: readonly string[]): Promise<InstallMailbox[]> {
  // A named statement: planned once per connection (its plan costs more than its run).
  const { rows } = await db.query<InstallMailbox>({
    name: 'install_mailboxes',
    text: `select e.id, e.address, e.teammate_id, t.deleted_at is not null as deleted, t.display_name,
                  coalesce((select array_agg(a.address order by a.address) from emails a where a.teammate_id = e.teammate_id and a.id <> e.id), '{}') as aliases,
                  ${groupIdsOf('e.workspace_id', 'e.teammate_id')} as group_ids
             from unnest($2::uuid[]) as w(id) join emails e on e.id = w.id and e.workspace_id = $1 join teammates t on t.id = e.teammate_id`,
    values: [workspaceId, emailIds],
  });
  return rows;
}

/** The current teammates a directory integration (any of `integrationIds`) lists with this external id. */
export async function teammatesBySource(db: Queryable, workspaceId: string, integrationIds: readonly string[], externalId: string): Promise<string[]> {
  const { rows } = await db.query<{ teammate_id: string }>(
    `select ts.teammate_id from teammate_sources ts join teammates t on t.id = ts.teammate_id and t.deleted_at is null
      where ts.workspace_id = $1 and ts.integration_id = any($2::uuid[]) and ts.external_id = $3`,
    [workspaceId, integrationIds, externalId],
  );
  return rows.map((r) => r.teammate_id);
}
