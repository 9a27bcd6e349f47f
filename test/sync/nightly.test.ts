/** The nightly directory sync: one run per active directory integration of every workspace. */
import { describe, expect, it } from 'vitest';
import { crontab } from '../../src/tasks/index.ts';
import { startAllRuns } from '../../src/integrations/syncRuns.ts';
import { useTestContext, testConfig } from '../helpers/db.ts';
import { seedIntegration } from '../api/helpers.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';

describe('nightly directory sync', () => {
  const t = useTestContext();

  it('is scheduled at DIRECTORY_SYNC_CRON', () => {
    const items = crontab(testConfig({ DIRECTORY_SYNC_CRON: '30 1 * * *' }));
    expect(items.find((i) => i.task === 'directory_sync_all')).toMatchObject({ match: '30 1 * * *' });
  });

  it('starts one run per active directory integration across workspaces, and none for lost, disconnected or mailbox ones', async () => {
    const a = (await workspaceWithKey(t.ctx, 'A')).workspaceId;
    const b = (await workspaceWithKey(t.ctx, 'B')).workspaceId;
    const ids = [
      await seedIntegration(t.ctx.pool, a, { name: 'A dir' }),
      await seedIntegration(t.ctx.pool, b, { name: 'B dir' }),
      await seedIntegration(t.ctx.pool, b, { category: 'smart_fields', name: 'B values' }),
    ];
    await seedIntegration(t.ctx.pool, a, { status: 'access_lost' });
    await seedIntegration(t.ctx.pool, a, { status: 'disconnected' });
    await seedIntegration(t.ctx.pool, b, { category: 'signatures' });
    const started = await startAllRuns(t.ctx.pool, 'schedule');
    expect(started.map((r) => r.integration_id).sort()).toEqual(ids.sort());
    expect(await startAllRuns(t.ctx.pool, 'schedule')).toEqual([]);
  });
});
