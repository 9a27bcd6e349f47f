/**
 * The Slack source driven by the real sync engine against Postgres: members become teammates, a
 * smart field mapped to a custom profile field gets its value, and a member deactivated later is
 * removed by the next (full) listing.
 */
import { VALUE_ROWS } from '../../helpers/fixtures/teammates.ts';
import { describe, expect, it } from 'vitest';
import { useNock } from '../helpers.ts';
import { withTx } from '../../../src/db/tx.ts';
import { insertIntegration } from '../../../src/integrations/integrations.ts';
import { executeRun } from '../../../src/sync/engine.ts';
import { startRuns } from '../../../src/integrations/syncRuns.ts';
import type { RetryPolicy } from '../../../src/sync/retry.ts';
import { useTestContext } from '../../helpers/db.ts';
import { mapSmartField, workspaceWithKey } from '../../helpers/fixtures.ts';
import { CREDENTIALS, fixture, mockProfiles, mockUsersList, SCOPES, slack } from './helpers.ts';

const FAST: RetryPolicy = { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 };

useNock();

describe('Slack through the sync engine', () => {
  const t = useTestContext();

  it('creates teammates from members, fills custom-field smart fields, and removes a member deactivated later', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await withTx(t.ctx.pool, (client) =>
      insertIntegration(t.ctx, client, {
        workspaceId,
        kind: 'slack',
        category: 'teammates',
        name: 'Acme Slack',
        credentials: CREDENTIALS,
        config: { profile_requests_per_minute: 6000 },
      }),
    );
    const pronouns = await mapSmartField(t.ctx, workspaceId, 'pronouns', integration.id, 'fields.Pronouns');
    const sync = async () => {
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
      return (await executeRun(t.ctx, run!.id, { retry: FAST }))!;
    };
    const active = async () =>
      (
        await t.ctx.pool.query<{ external_id: string }>(
          'select s.external_id from teammate_sources s join teammates t on t.id = s.teammate_id where t.workspace_id = $1 and t.deleted_at is null order by 1',
          [workspaceId],
        )
      ).rows.map((r) => r.external_id);

    const first = mockProfiles(mockUsersList(slack()));
    expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'full', pages: 3 });
    first.done();
    // Alice, Mohammed and Uni; Alice's old account shares her address, the deactivated member is not created.
    expect(await active()).toEqual(['U01ALICE', 'U02RTL01', 'U03UNI01']);
    const v = await t.ctx.pool.query(
      `select v.value from ${VALUE_ROWS} v join teammate_sources s on s.teammate_id = v.teammate_id where v.smart_field_id = $1 and s.external_id = $2`,
      [pronouns, 'U01ALICE'],
    );
    expect(v.rows[0].value).toBe('she/her');

    // Mohammed is deactivated; the workspace now fits on one page.
    const page2 = fixture<{ members: { id: string; deleted?: boolean }[] }>('users.list.page2.json');
    const page1 = fixture<{ members: unknown[] }>('users.list.page1.json');
    const page3 = fixture<{ members: unknown[] }>('users.list.page3.json');
    const members = [...page1.members, ...page2.members.map((m) => (m.id === 'U02RTL01' ? { ...m, deleted: true } : m)), ...page3.members];
    const second = slack()
      .post('/api/users.list')
      .reply(200, { ok: true, members, response_metadata: { next_cursor: '' } }, SCOPES)
      .post('/api/team.profile.get')
      .reply(200, fixture('team.profile.get.json'))
      .post('/api/users.profile.get')
      .times(3)
      .reply(200, fixture('users.profile.get.U03DUPE1.json'));
    expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'full', deleted: 1 });
    second.done();
    expect(await active()).toEqual(['U01ALICE', 'U03UNI01']);
  });
});
