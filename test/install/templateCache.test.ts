/**
 * Compiled templates are cached by the published content itself, not by its publication time. Two
 * publishes of different drafts can carry the same `last_published_at` to the millisecond (it is
 * the transaction's start time); the later content must still be what mailboxes receive. Keyed by
 * the time, the second render reused the first publish's template, its hash matched the installed
 * one, and the install wrote nothing: the mailbox kept the previous signature.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { renderForAddress } from '../../src/analytics/addressRender.ts';
import { useTestContext } from '../helpers/db.ts';
import { workspaceWithKey } from '../helpers/fixtures.ts';
import { insertSignature } from '../helpers/fixtures/signatures.ts';
import { insertTeammate } from '../helpers/fixtures/teammates.ts';

const tree = (text: string) => ({ type: 'stack', children: [{ type: 'text', tokens: [{ type: 'textToken', value: text }] }] });
const PUBLISHED_AT = '2026-11-25T12:00:00.123456Z';

describe('compiled template cache', () => {
  const t = useTestContext();
  let workspaceId: string;
  let teammateId: string;
  let signatureId: string;

  beforeAll(async () => {
    ({ workspaceId } = await workspaceWithKey(t.ctx));
    teammateId = (await insertTeammate(t.ctx.pool, workspaceId, { displayName: 'Ada Lovelace', emails: [{ address: 'ada@example.test', primary: true }] })).id;
    signatureId = await insertSignature(t.ctx.pool, workspaceId, {
      name: 'Main',
      draftContent: tree('First publish'),
      published: true,
      publishedAt: PUBLISHED_AT,
    });
  });

  const render = () => renderForAddress(t.ctx, { workspaceId, teammateId, signatureId, kind: 'primary' });

  it('renders the latest content when two publishes share a publication time', async () => {
    const first = await render();
    expect(first.html).toContain('First publish');

    // A second publish in the same millisecond, of another draft.
    await t.ctx.pool.query(`update signatures set content = $2, draft_content = $2, last_published_at = $3 where id = $1`, [
      signatureId,
      tree('Second publish'),
      PUBLISHED_AT,
    ]);
    const second = await render();
    expect(second.html).toContain('Second publish');
    expect(second.html).not.toContain('First publish');
    expect(second.hash).not.toBe(first.hash);
  });
});
