/** One page of a workspace-scoped list, for the owners' list queries (routes hand over the page they parsed). */
import type { Queryable } from './tx.ts';

export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * The rows of one page and the count of all. `from` is the FROM/WHERE part of the query (with $1
 * the workspace id); `select` the columns; `order` the order, newest first by default.
 */
export async function listPage<R>(
  db: Queryable,
  workspaceId: string,
  page: PageWindow,
  select: string,
  from: string,
  order = 'created_at desc, id desc',
): Promise<{ rows: R[]; total: number }> {
  const count = await db.query<{ n: number }>(`select count(*)::int as n ${from}`, [workspaceId]);
  const { rows } = await db.query<R & object>(`select ${select} ${from} order by ${order} limit $2 offset $3`, [workspaceId, page.limit, page.offset]);
  return { rows, total: count.rows[0]?.n ?? 0 };
}
