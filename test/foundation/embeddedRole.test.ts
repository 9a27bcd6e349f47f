/**
 * Embedded mode: the application connects as `sigsync_app`, which is no superuser, owns nothing and
 * can change no schema (it bypasses only graphile-worker's row-level security); migrations run as the owner, and the role can read and write every table
 * they make (graphile-worker's included).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type EmbeddedCluster } from '../../src/db/embedded.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/log.ts';

describe('embedded Postgres: the application role', () => {
  let dir: string;
  let cluster: EmbeddedCluster;
  let app: pg.Client;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sigsync-role-'));
    await fs.chmod(dir, 0o755);
    cluster = await startEmbedded(dir, createLogger('warn'));
    await migrate(cluster.ownerUrl, createLogger('warn'));
    app = new pg.Client({ connectionString: cluster.url });
    await app.connect();
  }, 120_000);
  afterAll(async () => {
    await app?.end();
    await cluster?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('is no superuser, owns nothing, and cannot change the schema', async () => {
    expect(new URL(cluster.url).username).toBe('sigsync_app');
    expect(new URL(cluster.ownerUrl).username).not.toBe('sigsync_app');
    const me = (await app.query(`select rolsuper, rolcreatedb, rolcreaterole, rolbypassrls from pg_roles where rolname = current_user`)).rows[0];
    // It bypasses row-level security only for graphile-worker's private tables: no other table has it.
    expect(me).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolbypassrls: true });
    expect(
      (
        await app.query(
          `select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.relrowsecurity and n.nspname <> 'graphile_worker'`,
        )
      ).rows[0].n,
    ).toBe(0);
    expect((await app.query(`select count(*)::int as n from pg_class c join pg_roles r on r.oid = c.relowner where r.rolname = current_user`)).rows[0].n).toBe(
      0,
    );
    await expect(app.query('create table intruder (id int)')).rejects.toMatchObject({ code: '42501' });
    await expect(app.query('drop table workspaces')).rejects.toMatchObject({ code: '42501' });
    await expect(app.query('alter table workspaces add column x int')).rejects.toMatchObject({ code: '42501' });
    await expect(app.query(`copy workspaces to program 'true'`)).rejects.toMatchObject({ code: '42501' });
  });

  it('reads and writes the rows of every table, graphile-worker included', async () => {
    const ws = (await app.query(`insert into workspaces (name) values ('Acme') returning id`)).rows[0].id;
    expect((await app.query('update workspaces set name = $2 where id = $1', [ws, 'Acme 2'])).rowCount).toBe(1);
    await app.query(`select graphile_worker.add_job('noop', '{}'::json)`);
    expect((await app.query('select count(*)::int as n from graphile_worker.jobs')).rows[0].n).toBe(1);
    await app.query('create temp table scratch (id int)');
  });
});
