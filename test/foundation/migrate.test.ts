import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.ts';
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
      'memberships',
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
});
