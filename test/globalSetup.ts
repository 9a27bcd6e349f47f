/**
 * One Postgres per test run: TEST_DATABASE_URL when set, otherwise an embedded cluster in a temp
 * directory. A template database is migrated once; each test file copies it (test/helpers/db.ts).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { createLogger } from '../src/log.ts';
import { migrate } from '../src/db/migrate.ts';
import { startEmbedded, type EmbeddedCluster } from '../src/db/embedded.ts';
import { appendIndexUsage } from '../scripts/index-usage.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDb: string;
  }
}

let cluster: EmbeddedCluster | undefined;
let tmp: string | undefined;
let adminUrl: string;
const templateDb = `sigsync_template_${process.pid}`;

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function setup(project: TestProject): Promise<void> {
  const logger = createLogger('warn');
  if (process.env.TEST_DATABASE_URL) {
    adminUrl = process.env.TEST_DATABASE_URL;
  } else {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'sigsync-test-'));
    await fs.chmod(tmp, 0o755);
    cluster = await startEmbedded(tmp, logger);
    adminUrl = cluster.ownerUrl;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${templateDb}`);
  await admin.query(`create database ${templateDb}`);
  await admin.end();
  await migrate(withDatabase(adminUrl, templateDb), logger);
  project.provide('adminUrl', adminUrl);
  project.provide('templateDb', templateDb);
}

export async function teardown(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${templateDb} with (force)`);
  const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'sigsync_t_%'`);
  for (const r of rows) {
    // A file that left its database behind: its index scans count too (TEST_INDEX_USAGE, test/helpers/db.ts).
    const file = process.env.TEST_INDEX_USAGE;
    if (file) await appendIndexUsage(withDatabase(adminUrl, r.datname), file, r.datname, 0);
    await admin.query(`drop database if exists ${r.datname} with (force)`);
  }
  await admin.end();
  await cluster?.stop();
  if (tmp) await fs.rm(tmp, { recursive: true, force: true });
}
