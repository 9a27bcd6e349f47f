/** A sync run refreshes planner statistics each time it has doubled the rows it created, from 1,000 on. */
import { expect, it } from 'vitest';
import { SyncStatistics } from '../../src/sync/stats.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import { insertTeammate, insertTeammates } from '../helpers/fixtures/teammates.ts';

const t = useTestContext();

it('analyzes the directory tables at 1,000 created rows, then each time the count doubles', async () => {
  const { workspaceId } = await workspaceWithKey(t.ctx);
  await insertTeammates(t.ctx.pool, workspaceId, 3);
  // reltuples is what the planner believes; -1 means the table was never analyzed.
  const believed = async () => (await t.ctx.pool.query<{ n: number }>(`select reltuples::int as n from pg_class where relname = 'teammates'`)).rows[0]!.n;
  const addTeammate = () => insertTeammate(t.ctx.pool, workspaceId, { displayName: 'more' });
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
