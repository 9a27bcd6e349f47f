/**
 * A fresh database per test file, copied from the migrated template, and an AppContext on it.
 *
 *   const t = useTestContext();         // in a describe/file scope
 *   it('...', async () => { await t.ctx.pool.query(...) })
 */
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { makeWorkerUtils } from 'graphile-worker';
import { createLogger } from '../../src/log.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { Secrets } from '../../src/crypto/secrets.ts';
import { createMetrics } from '../../src/metrics.ts';
import { createPool } from '../../src/db/pool.ts';
import { graphileLogger } from '../../src/graphileLogger.ts';
import type { AppContext } from '../../src/context.ts';
import { appendIndexUsage } from '../../scripts/index-usage.ts';

export const TEST_KEY = crypto.createHash('sha256').update('sigsync test key').digest('hex');

export function databaseUrl(name: string): string {
  const u = new URL(inject('adminUrl'));
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Creates a database: a copy of the migrated template, or empty when `empty` is set.
 * With TEST_INDEX_USAGE=FILE, `drop` first appends the database's index scans to FILE
 * (scripts/index-usage.ts sums them).
 */
export async function createDatabase(opts: { empty?: boolean } = {}): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `sigsync_t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  try {
    await admin.query(opts.empty ? `create database ${name}` : `create database ${name} template ${inject('templateDb')}`);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: databaseUrl(name),
    async drop() {
      const file = process.env.TEST_INDEX_USAGE;
      if (file) await appendIndexUsage(databaseUrl(name), file, path.relative(process.cwd(), expect.getState().testPath ?? name));
      const c = new pg.Client({ connectionString: inject('adminUrl') });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    DATA_DIR: path.join(os.tmpdir(), 'sigsync-test-data'),
    ENCRYPTION_KEY: TEST_KEY,
    LOG_LEVEL: 'silent',
    PORT: '0',
    // Tests point integrations (and most webhooks) at loopback emulators and receivers.
    ALLOW_INSECURE_OUTBOUND_URLS: '1',
    ...overrides,
  });
}

export interface TestContext {
  ctx: AppContext;
  url: string;
}

export async function openTestContext(url: string, configOverrides: Record<string, string> = {}): Promise<AppContext & { close(): Promise<void> }> {
  const config = testConfig({ DATABASE_URL: url, ...configOverrides });
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const pool = createPool(url, 10);
  const jobs = await makeWorkerUtils({ pgPool: pool, logger: graphileLogger(logger) });
  return {
    config,
    pool,
    logger,
    secrets: new Secrets(Buffer.from(TEST_KEY, 'hex')),
    metrics: createMetrics(),
    jobs,
    async close() {
      await jobs.release();
      await pool.end();
    },
  };
}

/** Registers beforeAll/afterAll hooks giving the file its own migrated database and context. */
export function useTestContext(configOverrides: Record<string, string> = {}): TestContext {
  const t = {} as TestContext;
  let drop: () => Promise<void>;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const db = await createDatabase();
    drop = db.drop;
    const ctx = await openTestContext(db.url, configOverrides);
    close = ctx.close;
    t.ctx = ctx;
    t.url = db.url;
  });
  afterAll(async () => {
    await close?.();
    await drop?.();
  });
  return t;
}

/** A pool over `pool` whose first query fails (a lost connection), with every statement it was asked. */
export function failingOncePool(pool: pg.Pool): { pool: pg.Pool; statements: string[] } {
  const statements: string[] = [];
  let fail = true;
  const wrapped = {
    query: (sql: string, params: unknown[]) => {
      statements.push(sql);
      if (fail) {
        fail = false;
        return Promise.reject(new Error('connection lost'));
      }
      return pool.query(sql, params);
    },
  } as unknown as pg.Pool;
  return { pool: wrapped, statements };
}
