/**
 * A run asks for its first users page beside the groups listing, which the page does not depend
 * on: with groups.list held, the first users page has been asked for, and nothing is written until
 * the groups are known.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/sync/runs.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../src/sandbox/google.ts';
import { useTestContext } from '../helpers/db.ts';
import { waitFor } from '../helpers/cli.ts';
import { connectGoogle, workspaceWithKey } from '../helpers/fixtures.ts';

describe('the start of a run', () => {
  const t = useTestContext();
  let google: GoogleEmulator;
  beforeAll(async () => {
    google = await startGoogleEmulator(generateGoogleTenant(700));
  });
  afterAll(() => google.close());

  it('asks for the first users page while the groups are listed, and writes nothing before they are known', async () => {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const integration = await connectGoogle(t.ctx, workspaceId, google.url);
    google.knobs.hold = { route: 'groups.list', after: 0 };
    const [run] = await startRuns(t.ctx.pool, workspaceId, [integration.id], { trigger: 'cli' });
    const done = executeRun(t.ctx, run!.id);
    done.catch(() => {});
    try {
      await waitFor(async () => google.counters.held > 0 && (google.counters.byRoute['users.list'] ?? 0) >= 1);
      const written = await t.ctx.pool.query<{ n: number }>('select count(*)::int as n from teammate_sources where integration_id = $1', [integration.id]);
      expect(written.rows[0]!.n).toBe(0);
    } finally {
      google.knobs.hold = null;
    }
    expect(await done).toMatchObject({ status: 'succeeded', created: 700, seen: 700 });
  });
});
