/**
 * The set-based teammate events and the stops that go with a removal: teammate.deleted's payload
 * exactly (its addresses primary first, then by address; `occurred_at` the transaction's time, to
 * the millisecond, as the column's default), the removed teammate's installations stopped and no
 * one else's; the fan-out task stops the installations of the removed teammates it is given only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { withTx } from '../../src/db/tx.ts';
import { removeTeammate } from '../../src/teammates/teammates.ts';
import { fanoutTeammates } from '../../src/tasks/fanoutTeammates.ts';
import type { TaskContext } from '../../src/tasks/define.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import { insertInstallation } from '../helpers/fixtures/installations.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

describe('teammate events and the stops of a removal', () => {
  const t = useTestContext();
  let ws: string;
  let other: string;
  let signatureId: string;
  let integrationId: string;

  /** A teammate with two addresses, each installed. */
  const installedTeammate = async (workspaceId: string, name: string, sig = signatureId, integration = integrationId) => {
    const slug = name.toLowerCase();
    const tm = await insertTeammate(t.ctx.pool, workspaceId, {
      displayName: name,
      emails: [{ address: `a.${slug}@acme.test` }, { address: `${slug}@acme.test`, primary: true }],
    });
    for (const emailId of tm.emailIds)
      await insertInstallation(t.ctx.pool, workspaceId, { emailId, signatureId: sig, integrationId: integration, status: 'installed' });
    return tm;
  };
  const statuses = async (emailIds: string[]) =>
    (await t.ctx.pool.query<{ status: string }>('select status from installations where email_id = any($1::uuid[]) order by email_id', [emailIds])).rows.map(
      (r) => r.status,
    );

  beforeAll(async () => {
    ({ workspaceId: ws } = await workspaceWithKey(t.ctx));
    ({ workspaceId: other } = await workspaceWithKey(t.ctx));
    signatureId = await insertSignature(t.ctx.pool, ws, { draftContent: { type: 'stack', children: [] }, published: true });
    integrationId = await insertIntegrationRow(t.ctx.pool, ws, { category: 'signatures' });
  });

  it("a removal writes teammate.deleted with the exact payload and stops that teammate's installations only", async () => {
    const gone = await installedTeammate(ws, 'Gone');
    const stays = await installedTeammate(ws, 'Stays');
    expect(await withTx(t.ctx.pool, (c) => removeTeammate(c, ws, gone.id))).toBe(true);

    const { rows } = await t.ctx.pool.query<{ payload: unknown; text: string; at: string }>(
      `select payload, payload::text as text, to_char(occurred_at at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
         from events where workspace_id = $1 and type = 'teammate.deleted'`,
      [ws],
    );
    expect(rows).toHaveLength(1);
    const expected = {
      type: 'teammate.deleted',
      occurred_at: rows[0]!.at,
      teammate: { uuid: gone.id, display_name: 'Gone' },
      emails: [
        { uuid: gone.emailIds[1], address: 'gone@acme.test', primary: true },
        { uuid: gone.emailIds[0], address: 'a.gone@acme.test', primary: false },
      ],
    };
    expect(rows[0]!.payload).toEqual(expected);
    // Byte for byte as Postgres keeps it.
    expect(rows[0]!.text).toBe((await t.ctx.pool.query<{ text: string }>('select $1::jsonb::text as text', [JSON.stringify(expected)])).rows[0]!.text);
    expect(await statuses(gone.emailIds)).toEqual(['not_installed', 'not_installed']);
    expect(await statuses(stays.emailIds)).toEqual(['installed', 'installed']);
  });

  it('the fan-out task stops the installations of the removed teammates among those it is given, in its workspace only', async () => {
    const removed = await installedTeammate(ws, 'Removed');
    const alive = await installedTeammate(ws, 'Alive');
    const otherSig = await insertSignature(t.ctx.pool, other, { draftContent: { type: 'stack', children: [] }, published: true });
    const stranger = await installedTeammate(other, 'Stranger', otherSig, await insertIntegrationRow(t.ctx.pool, other, { category: 'signatures' }));
    await t.ctx.pool.query('update teammates set deleted_at = now() where id = any($1::uuid[])', [[removed.id, stranger.id]]);

    const logger = pino({ level: 'silent' });
    await fanoutTeammates.run({ workspaceId: ws, teammateIds: [removed.id, alive.id, stranger.id] }, {
      app: t.ctx,
      logger,
      helpers: {},
    } as unknown as TaskContext);
    expect(await statuses(removed.emailIds)).toEqual(['not_installed', 'not_installed']);
    expect(await statuses(alive.emailIds)).toEqual(['installed', 'installed']);
    expect(await statuses(stranger.emailIds)).toEqual(['installed', 'installed']);
  });

  it("the privacy reads of events use the index of the two visitor event types (teammate events, a sync's bulk, are not in it)", async () => {
    for (let i = 0; i < 3; i++) await installedTeammate(ws, `Indexed${i}`);
    await withTx(t.ctx.pool, async (c) => {
      for (const id of (await c.query<{ id: string }>('select id from teammates where workspace_id = $1', [ws])).rows.map((r) => r.id))
        await removeTeammate(c, ws, id);
    });
    const client = await t.ctx.pool.connect();
    try {
      const entries = async () =>
        (
          await client.query<{ n: number }>(
            "select count(*)::int as n from events where workspace_id = $1 and type in ('visitor.identified', 'conversion.recorded')",
            [ws],
          )
        ).rows[0]!.n;
      expect(await entries()).toBe(0);
      await client.query('set enable_seqscan = off');
      const plan = await client.query<{ 'QUERY PLAN': string }>(
        "explain select id from events where workspace_id = $1 and type in ('visitor.identified', 'conversion.recorded') and payload->'visitor'->>'id' = 'x'",
        [ws],
      );
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('events_visitor');
    } finally {
      await client.query('reset enable_seqscan');
      client.release();
    }
  });
});
