/**
 * Profile photos through the assets category: a Slack directory sync lists where each photo is,
 * the photo sync copies changed photos into deduplicated assets, points the photo smart field at
 * their public URL and requests installs, and GET /assets/{token} serves the bytes.
 */
import { VALUE_ROWS } from '../helpers/fixtures/teammates.ts';
import nock from 'nock';
import sharp from 'sharp';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../src/api/server.ts';
import { syncPhotos } from '../../src/assets/photoSync.ts';
import { withTx } from '../../src/db/tx.ts';
import { insertIntegration } from '../../src/integrations/integrations.ts';
import { executeRun } from '../../src/sync/engine.ts';
import { startRuns } from '../../src/integrations/syncRuns.ts';
import { runCli } from '../helpers/cli.ts';
import { TEST_KEY, useTestContext } from '../helpers/db.ts';
import { queuedFanoutTeammates, workspaceWithKey } from '../helpers/fixtures.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';
import { CREDENTIALS, SCOPES } from '../connectors/slack/helpers.ts';

const CDN = 'https://avatars.slack-edge.com';
/** Real images (made by sharp): a photo is decoded, and converted when no mail client can show it (src/assets/convert.ts). */
const square = (r: number) => sharp({ create: { width: 96, height: 96, channels: 3, background: { r, g: 90, b: 140 } } });
const PNG = await square(10).png().toBuffer();
const PNG2 = await square(200).png().toBuffer();
const WEBP = await square(60).webp().toBuffer();
const HTML = Buffer.from('<!doctype html><html><body>Sign in</body></html>');

function member(id: string, email: string, photo: { hash: string; path: string } | null) {
  return {
    id,
    team_id: 'T0ACME01',
    name: id.toLowerCase(),
    deleted: false,
    real_name: id,
    profile: {
      real_name: id,
      email,
      first_name: id,
      last_name: '',
      ...(photo
        ? { avatar_hash: photo.hash, image_512: `${CDN}${photo.path}`, is_custom_image: true }
        : { avatar_hash: 'g0', image_512: `${CDN}/default.png`, is_custom_image: false }),
    },
  };
}

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect((host) => host.startsWith('127.0.0.1') || host.startsWith('localhost'));
});

afterEach(() => {
  nock.cleanAll();
});

describe('profile photos into assets', () => {
  const t = useTestContext({ PUBLIC_BASE_URL: 'https://sig.example.com' });

  async function setup() {
    const { workspaceId } = await workspaceWithKey(t.ctx);
    const connect = (category: 'teammates' | 'assets') =>
      withTx(t.ctx.pool, (client) =>
        insertIntegration(t.ctx, client, { workspaceId, kind: 'slack', category, name: `Slack ${category}`, credentials: CREDENTIALS, config: {} }),
      );
    const directory = await connect('teammates');
    const assets = await connect('assets');
    const field = await insertSmartField(t.ctx.pool, workspaceId, {
      label: 'Photo',
      slug: 'photo',
      kind: 'image',
      integrationId: assets.id,
      integrationAttribute: 'photo',
    });
    const listDirectory = async (members: unknown[]) => {
      const scope = nock('https://slack.com')
        .post('/api/users.list')
        .reply(200, { ok: true, members, response_metadata: { next_cursor: '' } }, SCOPES);
      const [run] = await startRuns(t.ctx.pool, workspaceId, [directory.id], { trigger: 'cli' });
      const done = await executeRun(t.ctx, run!.id, { retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 } });
      scope.done();
      expect(done?.status).toBe('succeeded');
    };
    const values = async () =>
      new Map(
        (
          await t.ctx.pool.query<{ external_id: string; value: string }>(
            `select s.external_id, v.value from ${VALUE_ROWS} v join teammate_sources s on s.teammate_id = v.teammate_id
              where v.workspace_id = $1 and v.smart_field_id = $2`,
            [workspaceId, field],
          )
        ).rows.map((r) => [r.external_id, r.value]),
      );
    const teammateId = async (externalId: string) =>
      (
        await t.ctx.pool.query<{ teammate_id: string }>('select teammate_id from teammate_sources where workspace_id = $1 and external_id = $2', [
          workspaceId,
          externalId,
        ])
      ).rows[0]!.teammate_id;
    const fanouts = () => queuedFanoutTeammates(t.ctx, workspaceId);
    const clearJobs = () => t.ctx.pool.query(`delete from graphile_worker._private_jobs`);
    return { workspaceId, directory, assets, field, listDirectory, values, teammateId, fanouts, clearJobs };
  }

  const MEMBERS = [
    member('UALICE', 'alice@acme.example', { hash: 'a1', path: '/alice-1_512.png' }),
    member('UERIN', 'erin@acme.example', { hash: 'e1', path: '/erin-1_512.png' }),
    member('UBOB', 'bob@acme.example', { hash: 'b1', path: '/bob-1_512.png' }),
    member('UCAROL', 'carol@acme.example', { hash: 'c1', path: '/carol-1_512.png' }),
    member('UDAVE', 'dave@acme.example', null),
  ];

  it('copies photos into deduplicated assets, rejects non-images, accepts missing photos, and fills the photo field', async () => {
    const s = await setup();
    await s.clearJobs();
    await s.listDirectory(MEMBERS);
    // The directory run queued the photo sync of the workspace's Slack assets integration.
    const queued = await t.ctx.pool.query(
      `select p.payload from graphile_worker.jobs j join graphile_worker._private_jobs p on p.id = j.id where j.task_identifier = 'sync_photos'`,
    );
    expect(queued.rows.map((r) => r.payload)).toContainEqual({ workspaceId: s.workspaceId, integrationId: s.assets.id });

    const cdn = nock(CDN)
      .get('/alice-1_512.png')
      .reply(200, PNG, { 'content-type': 'image/png' })
      .get('/erin-1_512.png')
      .reply(200, PNG, { 'content-type': 'image/png' })
      .get('/bob-1_512.png')
      .reply(200, HTML, { 'content-type': 'image/png' })
      .get('/carol-1_512.png')
      .reply(404);
    const result = await syncPhotos(t.ctx, s.workspaceId, s.assets.id);
    cdn.done();
    // Carol's photo is gone from the CDN; Dave, who never had one, has nothing to fetch.
    expect(result).toMatchObject({ status: 'succeeded', fetched: 3, stored: 2, rejected: 1, missing: 1, unchanged: 0, teammatesChanged: 2 });

    // Alice and Erin share the same bytes: one asset, one URL.
    const assets = await t.ctx.pool.query('select role, content_type, byte_size, public_token from assets where workspace_id = $1', [s.workspaceId]);
    expect(assets.rows).toHaveLength(1);
    expect(assets.rows[0]).toMatchObject({ role: 'profile_photo', content_type: 'image/png', byte_size: PNG.length });
    const url = `https://sig.example.com/assets/${assets.rows[0].public_token}`;
    expect(Object.fromEntries(await s.values())).toEqual({ UALICE: url, UERIN: url });
  });

  it('stores a WebP photo as a JPEG (Outlook for Windows shows no WebP)', async () => {
    const s = await setup();
    await s.listDirectory([member('UALICE', 'alice@acme.example', { hash: 'w1', path: '/alice-w_512.webp' })]);
    nock(CDN).get('/alice-w_512.webp').reply(200, WEBP, { 'content-type': 'image/webp' });
    expect(await syncPhotos(t.ctx, s.workspaceId, s.assets.id)).toMatchObject({ fetched: 1, stored: 1, rejected: 0 });
    const { rows } = await t.ctx.pool.query<{ content_type: string; data: Buffer }>('select content_type, data from assets where workspace_id = $1', [
      s.workspaceId,
    ]);
    expect(rows.map((r) => r.content_type)).toEqual(['image/jpeg']);
    expect(await sharp(rows[0]!.data).metadata()).toMatchObject({ format: 'jpeg', width: 96, height: 96 });
  });

  it('does not download an unchanged photo again, downloads a changed one, clears a removed one, and requests installs for them', async () => {
    const s = await setup();
    await s.listDirectory(MEMBERS.slice(0, 1));
    nock(CDN).get('/alice-1_512.png').reply(200, PNG, { 'content-type': 'image/png' });
    await syncPhotos(t.ctx, s.workspaceId, s.assets.id);
    await s.clearJobs();

    // Same listing: the photo's etag did not change, so nothing is fetched.
    await s.listDirectory(MEMBERS.slice(0, 1));
    const again = nock(CDN).get('/alice-1_512.png').reply(200, PNG, { 'content-type': 'image/png' });
    const second = await syncPhotos(t.ctx, s.workspaceId, s.assets.id);
    expect(again.isDone()).toBe(false);
    expect(second).toMatchObject({ fetched: 0, stored: 0, teammatesChanged: 0 });
    expect(await s.fanouts()).toEqual([]);
    nock.cleanAll();

    // Alice uploads a new picture.
    await s.listDirectory([member('UALICE', 'alice@acme.example', { hash: 'a2', path: '/alice-2_512.png' })]);
    const changed = nock(CDN).get('/alice-2_512.png').reply(200, PNG2, { 'content-type': 'image/png' });
    const third = await syncPhotos(t.ctx, s.workspaceId, s.assets.id);
    changed.done();
    expect(third).toMatchObject({ fetched: 1, stored: 1, teammatesChanged: 1 });
    const token = (
      await t.ctx.pool.query(`select public_token from assets where workspace_id = $1 and byte_size = $2 and sha256 = encode(sha256($3), 'hex')`, [
        s.workspaceId,
        PNG2.length,
        PNG2,
      ])
    ).rows[0].public_token;
    expect((await s.values()).get('UALICE')).toBe(`https://sig.example.com/assets/${token}`);
    expect(await s.fanouts()).toContain(await s.teammateId('UALICE'));
    await s.clearJobs();

    // Alice removes her picture: the field is cleared and her signature reinstalled.
    await s.listDirectory([member('UALICE', 'alice@acme.example', null)]);
    const fourth = await syncPhotos(t.ctx, s.workspaceId, s.assets.id);
    expect(fourth).toMatchObject({ fetched: 0, missing: 1, teammatesChanged: 1 });
    expect((await s.values()).has('UALICE')).toBe(false);
    expect(await s.fanouts()).toContain(await s.teammateId('UALICE'));
  });

  it('serves an asset at its public URL with its type, a strong ETag and cache headers, and 404 for unknown tokens', async () => {
    const s = await setup();
    await s.listDirectory(MEMBERS.slice(0, 1));
    nock(CDN).get('/alice-1_512.png').reply(200, PNG, { 'content-type': 'image/png' });
    await syncPhotos(t.ctx, s.workspaceId, s.assets.id);
    const url = (await s.values()).get('UALICE')!;
    const path = new URL(url).pathname;

    const server = await buildServer(t.ctx);
    try {
      const res = await server.inject({ method: 'GET', url: path });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.rawPayload.equals(PNG)).toBe(true);
      const etag = res.headers.etag as string;
      expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
      expect(res.headers['cache-control']).toContain('max-age=');

      const cached = await server.inject({ method: 'GET', url: path, headers: { 'if-none-match': etag } });
      expect(cached.statusCode).toBe(304);

      const unknown = await server.inject({ method: 'GET', url: `/assets/${'x'.repeat(43)}` });
      expect(unknown.statusCode).toBe(404);
      const malformed = await server.inject({ method: 'GET', url: '/assets/nope' });
      expect(malformed.statusCode).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('sigsync sync --integration <assets integration> queues its photo sync', async () => {
    const s = await setup();
    await s.clearJobs();
    const r = await runCli(['sync', '--integration', s.assets.id], { DATABASE_URL: t.url, ENCRYPTION_KEY: TEST_KEY });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('photo sync queued');
    const jobs = await t.ctx.pool.query(
      `select p.payload from graphile_worker.jobs j join graphile_worker._private_jobs p on p.id = j.id where j.task_identifier = 'sync_photos'`,
    );
    expect(jobs.rows.map((x) => x.payload)).toEqual([{ workspaceId: s.workspaceId, integrationId: s.assets.id }]);
  });
});
