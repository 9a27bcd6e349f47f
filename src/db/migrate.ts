/**
 * Applies the numbered SQL files in migrations/ (node-pg-migrate, one transaction per file, an
 * advisory lock so concurrent starts wait for each other) and graphile-worker's own schema.
 * A second run is a no-op.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { runMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import { graphileLogger } from '../graphileLogger.ts';
import { createPool } from './pool.ts';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');
export const MIGRATIONS_TABLE = 'schema_migrations';

export interface MigrateResult {
  applied: string[];
}

export async function migrate(databaseUrl: string, logger: Logger): Promise<MigrateResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      migrationsTable: MIGRATIONS_TABLE,
      direction: 'up',
      advisoryLockMode: 'wait',
      checkOrder: true,
      logger: { debug: () => {}, info: () => {}, warn: (m: string) => logger.warn(m), error: (m: string) => logger.error(m) },
    });
    const applied = ran.map((m) => m.name);
    if (applied.length) logger.info({ applied }, 'database migrated');
    else logger.debug('database schema up to date');
    const pool = createPool(databaseUrl, 2);
    try {
      await runMigrations({ pgPool: pool, logger: graphileLogger(logger) });
    } finally {
      await pool.end();
    }
    return { applied };
  } finally {
    await client.end();
  }
}

/** The migration names not yet applied; readiness requires none. */
export async function pendingMigrations(pool: pg.Pool): Promise<number> {
  const { readdir } = await import('node:fs/promises');
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).map((f) => f.replace(/\.sql$/, ''));
  const { rows } = await pool.query<{ name: string }>(`select name from ${MIGRATIONS_TABLE}`);
  const done = new Set(rows.map((r) => r.name));
  return files.filter((f) => !done.has(f)).length;
}
