/**
 * Where a directory page records each listed user's photo (src/assets/directoryPhotos.ts): against
 * the teammate the page wrote for the user, or, for a user the page did not write (no address, an
 * address another teammate holds), the teammate of the user's source; a user with neither gets no row.
 */
import { describe, expect, it } from 'vitest';
import type { DirectoryUser } from '../../connectors/types.ts';
import { recordDirectoryPhotos } from '../../src/assets/directoryPhotos.ts';
import { createWorkspace } from '../../src/db/workspaces.ts';
import { withTx } from '../../src/db/tx.ts';
import { useTestContext } from '../helpers/db.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertTeammate, insertTeammateSource } from '../helpers/fixtures/teammates.ts';

const user = (externalId: string, photo: DirectoryUser['photo'], removed = false): DirectoryUser => ({
  externalId,
  primaryEmail: null,
  aliases: [],
  givenName: null,
  familyName: null,
  displayName: externalId,
  removed,
  attributes: {},
  groups: [],
  orgUnits: [],
  photo,
});

describe('directory photos of a page', () => {
  const t = useTestContext();

  it('records each photo against the teammate the page wrote, else the source’s; users with neither, and removed ones, get no row', async () => {
    const ws = (await createWorkspace(t.ctx.pool, 'Photos')).id;
    const directory = await insertIntegrationRow(t.ctx.pool, ws, { kind: 'slack', category: 'teammates' });
    const written = await insertTeammate(t.ctx.pool, ws, { displayName: 'Written' });
    const sourced = await insertTeammate(t.ctx.pool, ws, { displayName: 'Sourced' });
    const gone = await insertTeammate(t.ctx.pool, ws, { displayName: 'Gone' });
    // The page wrote U_WRITTEN's source (mergeDirectoryPage); U_SOURCED's is from an earlier run.
    await insertTeammateSource(t.ctx.pool, ws, { integrationId: directory, externalId: 'U_WRITTEN', teammateId: written.id });
    await insertTeammateSource(t.ctx.pool, ws, { integrationId: directory, externalId: 'U_SOURCED', teammateId: sourced.id });
    await insertTeammateSource(t.ctx.pool, ws, { integrationId: directory, externalId: 'U_GONE', teammateId: gone.id });
    const rows = async () =>
      (
        await t.ctx.pool.query<{ external_id: string; teammate_id: string; photo_etag: string | null }>(
          'select external_id, teammate_id, photo_etag from teammate_photos where integration_id = $1 order by external_id',
          [directory],
        )
      ).rows;

    const page = [
      user('U_WRITTEN', { url: 'https://cdn.test/w.png', etag: 'w1' }),
      user('U_SOURCED', { url: 'https://cdn.test/s.png', etag: 's1' }),
      user('U_NOBODY', { url: 'https://cdn.test/n.png', etag: 'n1' }),
      user('U_GONE', { url: 'https://cdn.test/g.png', etag: 'g1' }, true),
    ];
    await withTx(t.ctx.pool, (c) => recordDirectoryPhotos(c, ws, directory, page, new Map([['U_WRITTEN', written.id]])));
    expect(await rows()).toEqual([
      { external_id: 'U_SOURCED', teammate_id: sourced.id, photo_etag: 's1' },
      { external_id: 'U_WRITTEN', teammate_id: written.id, photo_etag: 'w1' },
    ]);

    // The photo went away: the row is cleared for the photo sync, still against the source's teammate.
    await withTx(t.ctx.pool, (c) => recordDirectoryPhotos(c, ws, directory, [user('U_SOURCED', null)], new Map()));
    expect((await rows()).find((r) => r.external_id === 'U_SOURCED')).toEqual({ external_id: 'U_SOURCED', teammate_id: sourced.id, photo_etag: null });
  });
});
