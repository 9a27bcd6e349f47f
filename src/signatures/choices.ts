/**
 * Which signature an address gets: the one read of the signature aggregate that installs, the
 * Outlook add-in, the compatibility report and the support replay ask.
 *
 * - A teammate's signatures are those assigned to it directly or to a group or org unit it belongs
 *   to, published (content not null). Where several are, the highest assignment priority wins
 *   (of a signature assigned more than one way, its highest), then the most recently published,
 *   then the id. Destinations hold one signature per kind, so the others get `not_supported`.
 * - With `variants`, each choice carries the kinds of its variants that can be served (activated
 *   and published), so the add-in renders only the variants that exist.
 *
 * The teammates' groups come from the teammate aggregate (src/teammates/addresses.ts): a caller
 * that read the address already has them and passes them (`signatureChoicesFor`), one statement
 * for any number of teammates; `signatureChoicesOfTeammates` reads them first.
 */
import type { Queryable } from '../db/tx.ts';
import type { SignatureKind } from '../domain.ts';
import { currentTeammatesOf, membersOf, type Member } from '../teammates/addresses.ts';

export interface SignatureChoice {
  signature_id: string;
  priority: number;
  /** With `variants`: the variants of this signature that can be served (activated and published), sorted. */
  variant_kinds?: SignatureKind[];
}

/**
 * The signatures assigned to each teammate, best first, in one statement: teammate id -> choices
 * (a teammate without any is absent). Direct and group assignments are joined apart (each by its
 * index), so that a set of 10,000 teammates costs a few joins, not a scan of the assignments each.
 */
export async function signatureChoicesFor(
  db: Queryable,
  workspaceId: string,
  members: readonly Member[],
  opts: { variants?: boolean } = {},
): Promise<Map<string, SignatureChoice[]>> {
  const teammateIds = [...new Set(members.map((m) => m.teammateId))];
  const pairs = members.flatMap((m) => m.groupIds.map((g) => [m.teammateId, g] as const));
  const { rows } = await db.query<SignatureChoice & { teammate_id: string }>({
    name: 'signature_choices',
    text: `select c.teammate_id, c.signature_id, c.priority,
                  case when $5 then coalesce((select array_agg(v.kind order by v.kind) from signature_variants v
                                               where v.workspace_id = $1 and v.signature_id = c.signature_id and v.activated and v.content is not null), '{}') end as variant_kinds
             from (select x.teammate_id, x.signature_id, max(x.priority)::int as priority,
                          row_number() over (partition by x.teammate_id order by max(x.priority) desc, s.last_published_at desc nulls last, x.signature_id) as n
                     from (select w.teammate_id, a.signature_id, a.priority from unnest($2::uuid[]) as w(teammate_id)
                             join assignments a on a.teammate_id = w.teammate_id and a.workspace_id = $1
                           union all
                           select m.teammate_id, a.signature_id, a.priority from unnest($3::uuid[], $4::uuid[]) as m(teammate_id, group_id)
                             join assignments a on a.group_id = m.group_id and a.workspace_id = $1) x
                     join signatures s on s.id = x.signature_id and s.content is not null
                    group by x.teammate_id, x.signature_id, s.last_published_at) c
            order by c.teammate_id, c.n`,
    values: [workspaceId, teammateIds, pairs.map((p) => p[0]), pairs.map((p) => p[1]), opts.variants ?? false],
  });
  const out = new Map<string, SignatureChoice[]>();
  for (const { teammate_id, variant_kinds, ...choice } of rows) {
    const list = out.get(teammate_id) ?? [];
    list.push(opts.variants ? { ...choice, variant_kinds: variant_kinds ?? [] } : choice);
    out.set(teammate_id, list);
  }
  return out;
}

/** signatureChoicesFor for teammates whose groups the caller has not read. */
export async function signatureChoicesOfTeammates(db: Queryable, workspaceId: string, teammateIds: readonly string[]): Promise<Map<string, SignatureChoice[]>> {
  return signatureChoicesFor(db, workspaceId, await membersOf(db, workspaceId, teammateIds));
}

/** The current teammates a signature is assigned to, directly or through groups and org units. */
export async function assignedTeammates(db: Queryable, workspaceId: string, signatureId: string): Promise<string[]> {
  const { rows } = await db.query<{ teammate_id: string | null; group_id: string | null }>(
    'select teammate_id, group_id from assignments where workspace_id = $1 and signature_id = $2',
    [workspaceId, signatureId],
  );
  if (!rows.length) return [];
  const teammateIds = rows.flatMap((r) => (r.teammate_id ? [r.teammate_id] : []));
  const groupIds = rows.flatMap((r) => (r.group_id ? [r.group_id] : []));
  return currentTeammatesOf(db, workspaceId, { teammateIds, groupIds });
}
