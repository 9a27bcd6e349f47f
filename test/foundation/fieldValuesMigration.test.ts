/**
 * Migration 000030 (teammates.field_values): the rows of smart_field_values become each teammate's
 * document and come back on the way down; the triggers do what the rows' cascading foreign keys did.
 */
import fs from 'node:fs';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, MIGRATIONS_TABLE } from '../../src/db/migrate.ts';
import { createDatabase } from '../helpers/db.ts';
import { insertIntegrationRow } from '../helpers/fixtures/integrations.ts';
import { insertSmartField } from '../helpers/fixtures/smartFields.ts';

const MIGRATION = '000030_teammate_field_values';
const QUIET = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const BEFORE = fs.readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < MIGRATION).length;

describe('migration 000030: smart-field values as one document per teammate', async () => {
  const db = await createDatabase({ empty: true });
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  afterAll(async () => {
    await c.end();
    await db.drop();
  });
  const migrate = (direction: 'up' | 'down', count: number) =>
    runner({ dbClient: c, dir: MIGRATIONS_DIR, migrationsTable: MIGRATIONS_TABLE, direction, count, checkOrder: true, logger: QUIET });
  const documents = async (ids: string[]) =>
    (
      await c.query<{ field_values: unknown }>('select field_values from teammates where id = any($1::uuid[]) order by array_position($1::uuid[], id)', [ids])
    ).rows.map((r) => r.field_values);

  it('carries every value over, back again on the way down, and removes the values of a deleted field or integration', async () => {
    await migrate('up', BEFORE);
    const ws = (await c.query<{ id: string }>(`insert into workspaces (name) values ('A') returning id`)).rows[0]!.id;
    const dir = await insertIntegrationRow(c, ws, { name: 'Directory' });
    const other = await insertIntegrationRow(c, ws, { name: 'Other directory' });
    const title = await insertSmartField(c, ws, { slug: 'title', integrationId: dir, integrationAttribute: 'title' });
    const phone = await insertSmartField(c, ws, { slug: 'phone' });
    const dept = await insertSmartField(c, ws, { slug: 'dept', integrationId: other, integrationAttribute: 'dept' });
    const [ada, bob, cy] = (
      await c.query<{ id: string }>(
        `insert into teammates (workspace_id, display_name, updated_at) select $1, n, '2020-01-01T00:00:00Z' from unnest(array['Ada', 'Bob', 'Cy']) n returning id`,
        [ws],
      )
    ).rows.map((r) => r.id);
    const plant = (teammate: string, field: string, value: string, integration: string | null) =>
      c.query(`insert into smart_field_values (workspace_id, teammate_id, smart_field_id, value, integration_id, source) values ($1, $2, $3, $4, $5, $6)`, [
        ws,
        teammate,
        field,
        value,
        integration,
        integration ? 'integration' : 'manual',
      ]);
    await plant(ada!, title, 'Engineer', dir);
    await plant(ada!, phone, '+1 555 \\ "0100"', null);
    await plant(bob!, title, 'Chef', dir);
    await plant(bob!, dept, 'Kitchen', other);

    await migrate('up', 1);
    expect(await documents([ada!, bob!, cy!])).toEqual([
      { [title]: { value: 'Engineer', integration_id: dir }, [phone]: { value: '+1 555 \\ "0100"' } },
      { [title]: { value: 'Chef', integration_id: dir }, [dept]: { value: 'Kitchen', integration_id: other } },
      {},
    ]);
    const stamps = (await c.query<{ updated_at: Date }>('select updated_at from teammates where workspace_id = $1', [ws])).rows;
    expect(stamps.map((r) => r.updated_at.toISOString())).toEqual(Array(3).fill('2020-01-01T00:00:00.000Z'));
    expect((await c.query(`select 1 from information_schema.tables where table_name = 'smart_field_values'`)).rowCount).toBe(0);
    // A document is an object; a manual value has no integration_id key, never a null one.
    for (const bad of [{ [phone]: { value: 'x', integration_id: null } }, [], '"x"']) {
      await expect(c.query('update teammates set field_values = $2 where id = $1', [cy, JSON.stringify(bad)])).rejects.toThrow(/teammates_field_values_shape/);
    }

    // What the foreign keys' cascades did: a field removed leaves every document, an integration removed takes the values it wrote.
    await c.query('delete from smart_fields where id = $1', [phone]);
    await c.query('delete from integrations where id = $1', [dir]);
    expect(await documents([ada!, bob!, cy!])).toEqual([{}, { [dept]: { value: 'Kitchen', integration_id: other } }, {}]);

    await c.query(`update teammates set field_values = $2 where id = $1`, [cy, JSON.stringify({ [dept]: { value: 'Hall' } })]);
    await migrate('down', 1);
    const rows = await c.query('select teammate_id, smart_field_id, value, integration_id, source from smart_field_values order by value');
    expect(rows.rows).toEqual([
      { teammate_id: cy, smart_field_id: dept, value: 'Hall', integration_id: null, source: 'manual' },
      { teammate_id: bob, smart_field_id: dept, value: 'Kitchen', integration_id: other, source: 'integration' },
    ]);
    expect((await c.query(`select 1 from information_schema.columns where table_name = 'teammates' and column_name = 'field_values'`)).rowCount).toBe(0);
    await migrate('up', 1);
    expect(await documents([bob!, cy!])).toEqual([{ [dept]: { value: 'Kitchen', integration_id: other } }, { [dept]: { value: 'Hall' } }]);
  });
});
