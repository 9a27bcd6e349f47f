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
