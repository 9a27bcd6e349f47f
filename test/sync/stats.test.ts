/** A sync run refreshes planner statistics each time it has doubled the rows it created, from 1,000 on. */
import { expect, it } from 'vitest';
import { SyncStatistics } from '../../src/sync/stats.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';

const t = useTestContext();

it('analyzes the directory tables at 1,000 created rows, then each time the count doubles', async () => {
  const { workspaceId } = await workspaceWithKey(t.ctx);
  await t.ctx.pool.query(`insert into teammates (workspace_id, display_name) select $1, 'T' || i from generate_series(1, 3) i`, [workspaceId]);
  // reltuples is what the planner believes; -1 means the table was never analyzed.
  const believed = async () => (await t.ctx.pool.query<{ n: number }>(`select reltuples::int as n from pg_class where relname = 'teammates'`)).rows[0]!.n;
  const addTeammate = () => t.ctx.pool.query(`insert into teammates (workspace_id, display_name) values ($1, 'more')`, [workspaceId]);
  const stats = new SyncStatistics();

  await stats.afterPage(t.ctx.pool, 600);
  expect(await believed()).toBe(-1);
  await stats.afterPage(t.ctx.pool, 500); // 1,100 created: first refresh
  expect(await believed()).toBe(3);

  await addTeammate();
  await stats.afterPage(t.ctx.pool, 1000); // 2,100 < 2,200: no refresh
  expect(await believed()).toBe(3);
  await stats.afterPage(t.ctx.pool, 100); // 2,200: refresh
  expect(await believed()).toBe(4);
});
