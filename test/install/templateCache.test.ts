/**
 * Compiled templates are cached by the published content itself, not by its publication time. Two
 * publishes of different drafts can carry the same `last_published_at` to the millisecond (it is
 * the transaction's start time); the later content must still be what mailboxes receive. Keyed by
 * the time, the second render reused the first publish's template, its hash matched the installed
 * one, and the install wrote nothing: the mailbox kept the previous signature.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { renderForInstall } from '../../src/install/content.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';

const tree = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });
const PUBLISHED_AT = '2026-11-25T12:00:00.123456Z';

describe('compiled template cache', () => {
  const t = useTestContext();
  let workspaceId: string;
  let teammateId: string;
  let signatureId: string;

  beforeAll(async () => {
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    const q = async (sql: string, params: unknown[]) => (await t.ctx.pool.query<{ id: string }>(sql, params)).rows[0]!.id;
    teammateId = await q(`insert into teammates (workspace_id, display_name) values ($1, 'Ada Lovelace') returning id`, [workspaceId]);
    await q(`insert into emails (workspace_id, teammate_id, address, is_primary) values ($1, $2, 'ada@example.test', true) returning id`, [workspaceId, teammateId]);
    signatureId = await q(`insert into signatures (workspace_id, name, content, draft_content, last_published_at) values ($1, 'Main', $2, $2, $3) returning id`, [
      workspaceId,
      tree('First publish'),
      PUBLISHED_AT,
    ]);
  });

  const render = () => renderForInstall(t.ctx, { workspaceId, teammateId, signatureId, kind: 'primary' });

  it('renders the latest content when two publishes share a publication time', async () => {
    const first = await render();
    expect(first.html).toContain('First publish');

    // A second publish in the same millisecond, of another draft.
    await t.ctx.pool.query(`update signatures set content = $2, draft_content = $2, last_published_at = $3 where id = $1`, [signatureId, tree('Second publish'), PUBLISHED_AT]);
    const second = await render();
    expect(second.html).toContain('Second publish');
    expect(second.html).not.toContain('First publish');
    expect(second.hash).not.toBe(first.hash);
  });
});
