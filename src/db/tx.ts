/** Transaction helper and the minimal query interface shared by pools and clients. */
import type pg from 'pg';

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Runs fn in a transaction on one client; commits on success, rolls back on any throw. */
export async function withTx<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await fn(client);
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

/**
 * `col = $n` assignments for the columns whose value is not undefined (undefined leaves a column as
 * it is), numbered from `firstParam`; a column name may carry a cast (`content::jsonb`).
 */
export function setClause(columns: readonly (readonly [string, unknown])[], firstParam: number): { sql: string; values: unknown[] } {
  const given = columns.filter(([, v]) => v !== undefined);
  const sql = given.map(([c], i) => {
    const [name, cast] = c.split('::');
    return `${name} = $${firstParam + i}${cast ? `::${cast}` : ''}`;
  });
  return { sql: sql.join(', '), values: given.map(([, v]) => v) };
}
