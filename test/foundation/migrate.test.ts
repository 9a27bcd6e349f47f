import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import { createLogger } from '../../src/log.ts';
import { createDatabase } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';

describe('migrations', async () => {
  const db = await createDatabase({ empty: true });
  afterAll(() => db.drop());
  const logger = createLogger('silent');

  it('apply to an empty database, including graphile-worker’s schema', async () => {
    const { applied } = await migrate(db.url, logger);
    expect(applied).toContain('000001_init');
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query<{ table_name: string }>(`select table_name from information_schema.tables where table_schema = 'public' order by 1`);
    const tables = rows.map((r) => r.table_name);
    for (const t of [
      'workspaces',
      'api_keys',
      'integrations',
      'sync_runs',
      'teammates',
      'emails',
      'groups',
      'smart_fields',
      'folders',
      'signatures',
      'signature_variants',
      'assignments',
      'installations',
      'events',
      'webhook_endpoints',
      'webhook_deliveries',
      'marketing_campaigns',
    ]) {
      expect(tables).toContain(t);
    }
    // Memberships are the group_ids of the teammates' sources (000031_source_group_ids).
    expect(tables).not.toContain('memberships');
    const gw = await c.query(`select 1 from information_schema.schemata where schema_name = 'graphile_worker'`);
    expect(gw.rowCount).toBe(1);
    await c.end();
  });

  it('are a no-op the second time', async () => {
    expect((await migrate(db.url, logger)).applied).toEqual([]);
  });

  it('`sigsync migrate` reports an up-to-date database', async () => {
    const r = await runCli(['migrate'], { DATABASE_URL: db.url, LOG_LEVEL: 'warn' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('database is up to date');
  });

  it('enforce workspace scoping: an email cannot point at another workspace’s teammate', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const a = (await c.query(`insert into workspaces (name) values ('A') returning id`)).rows[0].id;
      const b = (await c.query(`insert into workspaces (name) values ('B') returning id`)).rows[0].id;
      const t = (await c.query(`insert into teammates (workspace_id, display_name) values ($1, 'x') returning id`, [a])).rows[0].id;
      await expect(c.query(`insert into emails (workspace_id, teammate_id, address) values ($1, $2, 'x@b.test')`, [b, t])).rejects.toThrow(/foreign key/);
    } finally {
      await c.end();
    }
  });

  it('keep email addresses unique per workspace regardless of case', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const a = (await c.query(`insert into workspaces (name) values ('C') returning id`)).rows[0].id;
      const t = (await c.query(`insert into teammates (workspace_id) values ($1) returning id`, [a])).rows[0].id;
      await c.query(`insert into emails (workspace_id, teammate_id, address) values ($1, $2, 'Ann@C.test')`, [a, t]);
      await expect(c.query(`insert into emails (workspace_id, teammate_id, address) values ($1, $2, 'ann@c.test')`, [a, t])).rejects.toThrow(/unique/);
    } finally {
      await c.end();
    }
  });

  it("000031 moves each membership to the source of its group's integration, and back down again", async () => {
    const [up, down] = fs.readFileSync(path.join(MIGRATIONS_DIR, '000031_source_group_ids.sql'), 'utf8').split(/^-- Down Migration$/m);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      await c.query('begin');
      const one = async (sql: string, params: unknown[] = []) => (await c.query(sql, params)).rows[0];
      const w = (await one(`insert into workspaces (name) values ('M') returning id`)).id;
      const dir = async (name: string) =>
        (
          await one(
            `insert into integrations (workspace_id, kind, category, name, credentials) values ($1, 'google_workspace', 'teammates', $2, '\\x00') returning id`,
            [w, name],
          )
        ).id;
      const [google, entra] = [await dir('Google'), await dir('Entra')];
      const group = async (i: string, ext: string, kind = 'group') =>
        (await one(`insert into groups (workspace_id, integration_id, kind, external_id, name) values ($1, $2, $3, $4, $4) returning id`, [w, i, kind, ext]))
          .id;
      const [sales, emea, staff] = [await group(google, 'sales'), await group(google, 'emea', 'org_unit'), await group(entra, 'staff')];
      const teammate = async () => (await one(`insert into teammates (workspace_id) values ($1) returning id`, [w])).id;
      const [ann, bob] = [await teammate(), await teammate()];
      await c.query(
        `insert into teammate_sources (workspace_id, integration_id, external_id, teammate_id, group_ids)
         values ($1, $2, 'ann', $4, $5), ($1, $3, 'ann', $4, $6), ($1, $2, 'bob', $7, '{}')`,
        [w, google, entra, ann, [sales, emea].sort(), [staff], bob],
      );
      // Down: one row per (group, teammate); then a membership no source of its integration lists.
      await c.query(down!);
      const memberships = async () =>
        (await c.query(`select group_id, teammate_id from memberships where workspace_id = $1 order by 1, 2`, [w])).rows.map(
          (r) => `${r.group_id} ${r.teammate_id}`,
        );
      expect(await memberships()).toEqual([`${sales} ${ann}`, `${emea} ${ann}`, `${staff} ${ann}`].sort());
      await c.query(`insert into memberships (workspace_id, group_id, teammate_id) values ($1, $2, $3), ($1, $4, $3)`, [w, sales, bob, staff]);
      // Up again: each source gets its integration's groups, sorted; bob's Entra membership has no Entra source and goes.
      await c.query(up!);
      const arrays = await c.query(`select integration_id, external_id, group_ids from teammate_sources where workspace_id = $1 order by 1, 2`, [w]);
      expect(Object.fromEntries(arrays.rows.map((r) => [`${r.integration_id === google ? 'google' : 'entra'} ${r.external_id}`, r.group_ids]))).toEqual({
        'google ann': [sales, emea].sort(),
        'google bob': [sales],
        'entra ann': [staff],
      });
      expect((await one(`select to_regclass('memberships') as t`)).t).toBeNull();
    } finally {
      await c.query('rollback');
      await c.end();
    }
  });
});
