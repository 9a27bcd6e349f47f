/**
 * The Microsoft Entra source driven by the real sync engine against Postgres: a full listing saves
 * the delta token, the next run is a delta run that writes only the changed users, and a 410 falls
 * back to a full listing.
 */
import { VALUE_ROWS } from '../../helpers/fixtures/teammates.ts';
import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { useNock } from '../helpers.ts';
import { withTx } from '../../../src/db/tx.ts';
import { insertIntegration } from '../../../src/integrations/integrations.ts';
import { executeRun } from '../../../src/sync/engine.ts';
import { startRuns } from '../../../src/integrations/syncRuns.ts';
import type { RetryPolicy } from '../../../src/sync/retry.ts';
import { useTestContext } from '../../helpers/db.ts';
import { mapSmartField, workspaceWithKey } from '../../helpers/fixtures.ts';
import {
  CREDENTIALS,
  EXT,
  fixture,
  GRAPH,
  graphErrorBody,
  mockFullListing,
  mockGroupList,
  mockGroups,
  mockMemberOf,
  mockPurpose,
  tokenScope,
  uid,
} from './helpers.ts';

const FAST: RetryPolicy = { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 };

useNock();

describe('Microsoft Entra through the sync engine', () => {
  const t = useTestContext();

  async function setup() {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await withTx(t.ctx.pool, (client) =>
      insertIntegration(t.ctx, client, {
        workspaceId,
        kind: 'microsoft_entra',
        category: 'teammates',
        name: 'Contoso',
        credentials: CREDENTIALS,
        config: { extension_attributes: [EXT] },
      }),
    );
    const title = await mapSmartField(t.ctx, workspaceId, 'job_title', integration.id, 'jobTitle');
    const sync = async () => {
      const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
      return (await executeRun(t.ctx, run!.id, { retry: FAST }))!;
    };
    const count = async (sql: string) => (await t.ctx.pool.query<{ n: number }>(sql, [workspaceId])).rows[0]!.n;
    return { workspaceId, integration, title, sync, count };
  }

  it('syncs a full listing, then a delta run that writes only the changed users, then falls back to a full listing on 410', async () => {
    const { integration, title, sync, count } = await setup();

    tokenScope();
    const full = mockFullListing(mockGroups(nock(GRAPH)));
    const first = await sync();
    full.done();
    expect(first).toMatchObject({ status: 'succeeded', mode: 'full', pages: 3 });
    // Adele, Nour, Zoë, Yael and the minimal user; Dan is disabled, the service account has no
    // email, and Adele's second account holds an address that is already taken.
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null')).toBe(5);
    expect(await count(`select count(*)::int as n from emails where workspace_id = $1 and address = 'adele@contoso.onmicrosoft.com'`)).toBe(1);
    const cursor = (await t.ctx.pool.query('select sync_cursor from integrations where id = $1', [integration.id])).rows[0].sync_cursor;
    expect(cursor.token).toBe('https://graph.microsoft.com/v1.0/users/delta?$deltatoken=LATEST-Xk9qfR2');

    // Delta: Nour changed title, user 9 (never synced) was deleted, Zoë was disabled, user 6 removed.
    tokenScope();
    const delta = mockPurpose(mockMemberOf(mockGroupList(nock(GRAPH)), uid(2), ['g-sales-0001', 'g-all-0002']), uid(3), 'user')
      .get('/v1.0/users/delta')
      .query({ $deltatoken: 'LATEST-Xk9qfR2' })
      .reply(200, fixture('users.delta.page1.json'))
      .get('/v1.0/users/delta')
      .query({ $skiptoken: 'DELTA-PAGE-2-pqwSUjGYvb3' })
      .reply(200, fixture('users.delta.page2.json'));
    const second = await sync();
    delta.done();
    expect(second).toMatchObject({ status: 'succeeded', mode: 'delta', pages: 2, created: 0, updated: 1 });
    const nour = await t.ctx.pool.query(
      `select v.value from ${VALUE_ROWS} v join teammate_sources s on s.teammate_id = v.teammate_id where v.smart_field_id = $1 and s.external_id = $2`,
      [title, uid(2)],
    );
    expect(nour.rows[0].value).toBe('Head of Sales');
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null')).toBe(4);
    const next = (await t.ctx.pool.query('select sync_cursor from integrations where id = $1', [integration.id])).rows[0].sync_cursor;
    expect(next.token).toBe('https://graph.microsoft.com/v1.0/users/delta?$deltatoken=NEXT-mS5DuRZGjVL-abc');

    // The token is gone: 410, then a full listing in the same run, and nobody lost or duplicated.
    tokenScope();
    const gone = mockFullListing(
      mockGroups(nock(GRAPH))
        .get('/v1.0/users/delta')
        .query({ $deltatoken: 'NEXT-mS5DuRZGjVL-abc' })
        .reply(410, graphErrorBody('syncStateNotFound', 'The sync state generation is not found.')),
    );
    const third = await sync();
    gone.done();
    expect(third).toMatchObject({ status: 'succeeded', mode: 'full' });
    expect(third.fallback_reason).toContain('syncStateNotFound');
    expect(await count('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null')).toBe(5);
    expect(
      await count('select count(*)::int as n from (select address from emails where workspace_id = $1 group by lower(address), address having count(*) > 1) d'),
    ).toBe(0);
    expect(
      await count(
        'select count(*)::int as n from teammate_sources s join teammates t on t.id = s.teammate_id where t.workspace_id = $1 and t.deleted_at is null',
      ),
    ).toBe(5);
  });
});
