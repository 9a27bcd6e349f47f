/**
 * Microsoft delta through the emulated tenant: a round costs what changed (memberships of the changed
 * users only), and a 410 on the stored deltaLink falls back to a full listing, losing and duplicating nobody.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withTx } from '../../src/db/tx.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import {
  generateMicrosoftTenant,
  microsoftCredentials,
  microsoftIntegrationConfig,
  startMicrosoftEmulator,
  type MicrosoftEmulator,
} from '../../emulators/microsoft.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import { countMemberships } from '../helpers/fixtures/teammates.ts';

const t = useTestContext();
let ms: MicrosoftEmulator;
const tenant = generateMicrosoftTenant(300);
beforeAll(async () => {
  ms = await startMicrosoftEmulator(tenant);
});
afterAll(() => ms.close());
it('an expired delta token falls back to a full listing that removes exactly the users gone, and nobody else', async () => {
  const { workspaceId } = await workspaceWithKey(t.ctx);
  const integ = await withTx(t.ctx.pool, (c) =>
    insertIntegration(t.ctx, c, {
      workspaceId,
      kind: 'microsoft_entra',
      category: 'teammates',
      name: 'E',
      credentials: microsoftCredentials(tenant),
      config: microsoftIntegrationConfig(ms),
    }),
  );
  const sync = async () => {
    const [r] = await startRuns(t.ctx.pool, workspaceId, [integ.id], { trigger: 'cli' });
    return (await executeRun(t.ctx, r!.id))!;
  };
  expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'full', created: 300 });
  expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'delta', seen: 0 });
  ms.removeUser(tenant.users[0]!.id);
  ms.removeUser(tenant.users[1]!.id);
  ms.expireDeltaTokens();
  const r = await sync();
  expect(r).toMatchObject({
    status: 'succeeded',
    mode: 'full',
    seen: 298,
    deleted: 2,
    pending_deletions: 0,
    fallback_reason: expect.stringMatching(/SyncStateNotFound/),
  });
  const left = await t.ctx.pool.query('select count(*)::int as n from teammates where workspace_id = $1 and deleted_at is null', [workspaceId]);
  expect(left.rows[0].n).toBe(298);
  const created = await t.ctx.pool.query(`select count(*)::int as n from events where workspace_id = $1 and type = 'teammate.created'`, [workspaceId]);
  expect(created.rows[0].n).toBe(300);
});

it('a delta round asks Graph for the memberships of the changed users only, and keeps their groups', async () => {
  const small = generateMicrosoftTenant(300);
  const emu = await startMicrosoftEmulator(small);
  try {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integ = await withTx(t.ctx.pool, (c) =>
      insertIntegration(t.ctx, c, {
        workspaceId,
        kind: 'microsoft_entra',
        category: 'teammates',
        name: 'E',
        credentials: microsoftCredentials(small),
        config: microsoftIntegrationConfig(emu),
      }),
    );
    const sync = async () => {
      const [r] = await startRuns(t.ctx.pool, workspaceId, [integ.id], { trigger: 'cli' });
      return (await executeRun(t.ctx, r!.id))!;
    };
    const memberships = () => countMemberships(t.ctx.pool, workspaceId);
    expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'full', created: 300 });
    // Everyone is in their department and, through it, in All staff.
    expect(await memberships()).toBe(600);
    const before = { ...emu.counters.byRoute };
    emu.updateUser(small.users[5]!.id, { jobTitle: 'Head of Sales' });
    emu.updateUser(small.users[6]!.id, { jobTitle: 'Staff Engineer' });
    // No smart field maps the title, so nothing a signature shows changed: had the round lost their
    // groups, both would count as updated.
    expect(await sync()).toMatchObject({ status: 'succeeded', mode: 'delta', seen: 2, updated: 0 });
    const asked = (route: string) => (emu.counters.byRoute[route] ?? 0) - (before[route] ?? 0);
    expect(asked('users.transitiveMemberOf')).toBe(2);
    expect(asked('groups.transitiveMembers')).toBe(0);
    expect(await memberships()).toBe(600);
  } finally {
    await emu.close();
  }
});
