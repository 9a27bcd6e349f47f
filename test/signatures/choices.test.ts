/**
 * Which signature an address gets (src/signatures/choices.ts), on real Postgres: direct and group
 * assignments, the highest priority of a signature assigned more than one way, ties broken by the
 * latest publish, unpublished signatures left out, the variants each choice can serve, and the
 * current teammates a signature is assigned to.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { assignedTeammates, signatureChoicesFor, signatureChoicesOfTeammates } from '../../src/signatures/choices.ts';
import { membersOf } from '../../src/teammates/addresses.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { assignToEveryGroup, assignToTeammate, insertSignature, upsertVariant } from '../helpers/fixtures/signatures.ts';
import { insertGroup, insertTeammate } from '../helpers/fixtures/teammates.ts';

const tree = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });

describe('signature choices', () => {
  const t = useTestContext();
  let ws: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ({ workspaceId: ws } = await workspaceWithKey(t.ctx));
    const db = t.ctx.pool;
    for (const name of ['ann', 'bob', 'cyd', 'dee'])
      ids[name] = (await insertTeammate(db, ws, { displayName: name, emails: [{ address: `${name}@example.test`, primary: true }] })).id;
    await db.query('update teammates set deleted_at = now() where id = $1', [ids.dee]);
    const directory = await insertIntegrationRow(db, ws);
    ids.group = await insertGroup(db, ws, { integrationId: directory, name: 'Staff', members: [ids.ann!, ids.bob!, ids.dee!] });
    ids.older = await insertSignature(db, ws, { name: 'Older', draftContent: tree('Older'), published: true, publishedAt: '2026-01-01T00:00:00Z' });
    ids.newer = await insertSignature(db, ws, { name: 'Newer', draftContent: tree('Newer'), published: true, publishedAt: '2026-02-01T00:00:00Z' });
    ids.draft = await insertSignature(db, ws, { name: 'Draft', draftContent: tree('Draft') });
    // Older: to ann directly (1) and to the group (5): its priority for ann is 5, a tie with Newer.
    await assignToTeammate(db, ws, ids.older!, ids.ann!, 1);
    for (const s of [ids.older!, ids.newer!]) await assignToEveryGroup(db, ws, s, 5);
    // Never published: left out whatever its priority.
    await assignToTeammate(db, ws, ids.draft!, ids.ann!, 9);
    await upsertVariant(db, ws, { signatureId: ids.newer!, kind: 'reply', content: tree('Reply'), activated: true });
    await upsertVariant(db, ws, { signatureId: ids.newer!, kind: 'internal', content: tree('Internal'), activated: false });
  });

  it("ranks each teammate's published signatures: highest priority of any assignment, then the latest publish", async () => {
    const choices = await signatureChoicesOfTeammates(t.ctx.pool, ws, [ids.ann!, ids.bob!, ids.cyd!]);
    expect(choices.get(ids.ann!)).toEqual([
      { signature_id: ids.newer, priority: 5 },
      { signature_id: ids.older, priority: 5 },
    ]);
    expect(choices.get(ids.bob!)).toEqual([
      { signature_id: ids.newer, priority: 5 },
      { signature_id: ids.older, priority: 5 },
    ]);
    expect(choices.has(ids.cyd!)).toBe(false);
  });

  it("a direct assignment of a higher priority wins over the group's, and each choice names the variants it can serve", async () => {
    await assignToTeammate(t.ctx.pool, ws, ids.older!, ids.bob!, 7);
    const members = await membersOf(t.ctx.pool, ws, [ids.bob!]);
    expect(members).toEqual([{ teammateId: ids.bob, groupIds: [ids.group] }]);
    const choices = await signatureChoicesFor(t.ctx.pool, ws, members, { variants: true });
    expect(choices.get(ids.bob!)).toEqual([
      { signature_id: ids.older, priority: 7, variant_kinds: [] },
      { signature_id: ids.newer, priority: 5, variant_kinds: ['reply'] },
    ]);
  });

  it('a signature is assigned to the current teammates it reaches directly or through a group', async () => {
    expect((await assignedTeammates(t.ctx.pool, ws, ids.newer!)).sort()).toEqual([ids.ann, ids.bob].sort());
    expect(await assignedTeammates(t.ctx.pool, ws, ids.draft!)).toEqual([ids.ann]);
  });
});
