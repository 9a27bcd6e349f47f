/**
 * Pages written at once (SYNC_PAGE_CONCURRENCY) still commit in listing order: when one page
 * fails, no page after it is written, the checkpoint stays after the last page written, and the
 * next run writes everyone once with one teammate.created each.
 *
 * A trigger refuses one person of page 3 of 5; page 4 is being written beside page 3 when it fails.
 * The same trigger holds the first person of page 1 for a moment, so that page 2 is certainly
 * written beside page 1 and waits for it to commit (order_wait), however fast the machine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { getRun, startRuns } from '../../src/integrations/syncRuns.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import type { RetryPolicy } from '../../src/sync/retry.ts';
import { useTestContext } from '../helpers/db.ts';
import { connectGoogle, eventCount, workspaceWithKey } from '../helpers/fixtures.ts';

const FAST: RetryPolicy = { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 };
const USERS = 2500; // five users pages of 500
const POISON = 'Given1499 Family1499'; // the last person of page 3
const SLOW = 'Given0 Family0'; // the first person of page 1

describe('pages written at once', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(USERS));
    google.knobs.latencyMs = 0;
  });
  afterAll(async () => {
    await t.ctx.pool.query('drop trigger if exists poison on teammates');
    await google.close();
  });

  it('a failed page fails the pages after it, unwritten; the next run writes each person once', async () => {
    expect(t.ctx.config.SYNC_PAGE_CONCURRENCY).toBeGreaterThan(1);
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    await t.ctx.pool.query(`
      create or replace function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.display_name = '${POISON}' then raise exception 'refused by the test'; end if;
        if new.display_name = '${SLOW}' then perform pg_sleep(0.3); end if;
        return new;
      end $$;
      create trigger poison before insert on teammates for each row execute function refuse_poison();`);

    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    const failed = await executeRun(t.ctx, run!.id, { retry: FAST });
    expect(failed).toMatchObject({ status: 'failed', pages: 2, created: 1000, deleted: 0 });
    expect(failed!.checkpoint?.pageToken).toBeTruthy();
    const written = await t.ctx.pool.query<{ n: number; last: number }>(
      `select count(*)::int as n, max(substring(display_name from 'Given(\\d+)')::int) as last from teammates where workspace_id = $1`,
      [workspaceId],
    );
    expect(written.rows[0]).toEqual({ n: 1000, last: 999 });
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(1000);
    expect(Number(failed!.stage_ms?.order_wait ?? 0)).toBeGreaterThan(0);

    await t.ctx.pool.query('drop trigger poison on teammates');
    const [again] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    expect(await executeRun(t.ctx, again!.id, { retry: FAST })).toMatchObject({ status: 'succeeded', pages: 5, created: USERS - 1000, seen: USERS });
    expect((await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).rows[0]!.n).toBe(USERS);
    expect(await eventCount(t.ctx, workspaceId, 'teammate.created')).toBe(USERS);
    expect((await getRun(t.ctx.pool, again!.id))?.checkpoint).toBeNull();
  });
});
