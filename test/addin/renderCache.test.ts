/**
 * The add-in's render cache (ADDIN_CACHE_SECONDS = 10): an answer is kept, rendered again in the
 * background late in its time while the kept one is served, never served past its time, and a
 * workspace's domains are read once for all its addresses.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { addinSignature, forgetAddinRenders } from '../../src/addin/signatures.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { useTestContext } from '../helpers/db.ts';
import { seedTeammate, tree } from '../api/helpers.ts';
import { assignToTeammate, insertSignature } from '../helpers/fixtures/signatures.ts';

describe('the add-in render cache', () => {
  const t = useTestContext({ ADDIN_CACHE_SECONDS: '10' });
  let ws: string;
  let signatureId: string;
  let now = Date.now();

  const publish = (text: string) =>
    t.ctx.pool.query(`update signatures set content = $2, last_published_at = clock_timestamp() where id = $1`, [signatureId, JSON.stringify(tree(text))]);
  const served = async (address = 'ann@acme.test') => (await addinSignature(t.ctx, ws, address)).variants.primary!.html;

  beforeAll(async () => {
    const { pool } = t.ctx;
    ws = (await createWorkspace(pool, 'Acme')).id;
    signatureId = await insertSignature(pool, ws, { name: 'Std', draftContent: tree('v1'), published: true });
    for (const name of ['Ann', 'Bob']) {
      const p = await seedTeammate(pool, ws, name);
      await assignToTeammate(pool, ws, signatureId, p.id);
    }
  });
  // The cache's clock is Date.now, moved by hand here.
  beforeEach(() => void vi.spyOn(Date, 'now').mockImplementation(() => now));
  afterEach(() => {
    forgetAddinRenders(t.ctx);
    vi.restoreAllMocks();
  });

  it('serves the kept answer, renders it again in the background late in its time, and never serves it past its time', async () => {
    const t0 = now;
    expect(await served()).toContain('v1');
    await publish('v2');
    // Before 80% of its time: the kept answer, and no render.
    now = t0 + 4_000;
    expect(await served()).toContain('v1');
    expect(await served()).toContain('v1');
    // Past 95% of it: still the kept answer at once, while the new one renders.
    now = t0 + 9_600;
    expect(await served()).toContain('v1');
    await expect.poll(() => served()).toContain('v2');
    // The new answer's time starts at its render: a change after it waits for the next render...
    const t1 = now;
    await publish('v3');
    now = t1 + 4_000;
    expect(await served()).toContain('v2');
    // ...and past its time the kept answer is never served: the request waits for the render.
    now = t1 + 10_001;
    expect(await served()).toContain('v3');
  });

  it('a render that fails is forgotten: the next request renders again', async () => {
    await publish('v4');
    const query = vi.spyOn(t.ctx.pool, 'query').mockRejectedValueOnce(new Error('connection lost'));
    await expect(served()).rejects.toThrow('connection lost');
    query.mockRestore();
    expect(await served()).toContain('v4');
  });

  it('reads the workspace domains once for all its addresses within the time', async () => {
    const query = vi.spyOn(t.ctx.pool, 'query');
    const domainReads = () => query.mock.calls.filter(([q]) => typeof q === 'object' && q !== null && (q as { name?: string }).name === 'addin_domains').length;
    await served('ann@acme.test');
    await served('bob@acme.test');
    expect(domainReads()).toBe(1);
    now += 10_001;
    await served('ann@acme.test');
    expect(domainReads()).toBe(2);
    query.mockRestore();
  });
});
