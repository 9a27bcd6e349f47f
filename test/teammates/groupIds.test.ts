/**
 * A teammate's groups as the group_ids of its directory sources (src/teammates/teammates.ts writes
 * them): a group the directory no longer lists leaves no id in any array (src/teammates/groups.ts),
 * a teammate with two directories is in the union of their groups, the member counts of the groups
 * list are one statement, and nothing reads another workspace's groups.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { listGroups, syncGroups } from '../../src/teammates/groups.ts';
import { currentTeammatesOf, membersOf } from '../../src/teammates/addresses.ts';
import { membersOfGroups } from '../../src/teammates/queries.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { addToGroups, groupIdsOf, insertGroup, insertTeammate } from '../helpers/fixtures/teammates.ts';

describe("teammates' groups on their sources", () => {
  const t = useTestContext();
  let ws: string;
  let other: string;
  let google: string;
  let entra: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    const db = t.ctx.pool;
    ({ workspaceId: ws } = await workspaceWithKey(t.ctx));
    ({ workspaceId: other } = await workspaceWithKey(t.ctx));
    [google, entra] = [await insertIntegrationRow(db, ws), await insertIntegrationRow(db, ws, { kind: 'microsoft_entra', name: 'Entra' })];
    for (const name of ['ann', 'bob']) ids[name] = (await insertTeammate(db, ws, { displayName: name })).id;
    ids.sales = await insertGroup(db, ws, { integrationId: google, name: 'Sales', externalId: 'sales', members: [ids.ann!, ids.bob!] });
    ids.emea = await insertGroup(db, ws, { integrationId: google, kind: 'org_unit', name: 'EMEA', externalId: 'emea', members: [ids.ann!] });
    ids.staff = await insertGroup(db, ws, { integrationId: entra, name: 'Staff', externalId: 'staff', members: [ids.ann!] });
    // Another workspace's teammate in its own group, and an id of it planted in that workspace only.
    const stranger = (await insertTeammate(db, other, { displayName: 'eve' })).id;
    const otherDir = await insertIntegrationRow(db, other);
    ids.foreign = await insertGroup(db, other, { integrationId: otherDir, name: 'Foreign', members: [stranger] });
    await addToGroups(db, other, { integrationId: otherDir, teammateId: stranger, groupIds: [ids.sales] });
  });

  it("a teammate with two directories is in the union of their groups, sorted; another workspace's sources are not read", async () => {
    const [ann, bob] = await membersOf(t.ctx.pool, ws, [ids.ann!, ids.bob!]).then((m) => [
      m.find((x) => x.teammateId === ids.ann),
      m.find((x) => x.teammateId === ids.bob),
    ]);
    expect(ann!.groupIds).toEqual([ids.sales, ids.emea, ids.staff].sort());
    expect(bob!.groupIds).toEqual([ids.sales]);
    expect((await membersOfGroups(t.ctx.pool, ws, [ids.sales!])).sort()).toEqual([ids.ann, ids.bob].sort());
    expect((await currentTeammatesOf(t.ctx.pool, ws, { teammateIds: [], groupIds: [ids.staff!] })).sort()).toEqual([ids.ann]);
    const { rows } = await listGroups(t.ctx.pool, ws, { limit: 10, offset: 0 });
    expect(Object.fromEntries(rows.map((r) => [r.name, r.member_count]))).toEqual({ Sales: 2, EMEA: 1, Staff: 1 });
  });

  it('a group or org unit the directory no longer lists leaves no id in any array; the other directory keeps its groups', async () => {
    // Google now lists only Sales: EMEA goes, from Ann's Google source too.
    const left = await syncGroups(t.ctx.pool, { id: google, workspace_id: ws }, [{ kind: 'group', externalId: 'sales', name: 'Sales' }]);
    expect([...left.values()]).toEqual([ids.sales]);
    expect(await groupIdsOf(t.ctx.pool, ids.ann!)).toEqual([ids.sales, ids.staff].sort());
    // Then none: Sales goes from both teammates; Entra's Staff stays.
    await syncGroups(t.ctx.pool, { id: google, workspace_id: ws }, []);
    expect(await groupIdsOf(t.ctx.pool, ids.ann!)).toEqual([ids.staff]);
    expect(await groupIdsOf(t.ctx.pool, ids.bob!)).toEqual([]);
    const { rows } = await listGroups(t.ctx.pool, ws, { limit: 10, offset: 0 });
    expect(rows.map((r) => [r.name, r.member_count])).toEqual([['Staff', 1]]);
  });
});
