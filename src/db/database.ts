/**
 * Which Postgres the process uses: DATABASE_URL when set, otherwise the embedded cluster under
 * DATA_DIR. Logs the choice with the password hidden.
 */
import path from 'node:path';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { prepareDataDir } from '../dataDir.ts';
import { redactUrl } from '../log.ts';
import { startEmbedded, type EmbeddedCluster } from './embedded.ts';
import { createPool } from './pool.ts';

export interface Database {
  url: string;
  /** Where migrations run: the owner's connection in embedded mode, DATABASE_URL otherwise. */
  migrationUrl: string;
  pool: pg.Pool;
  embedded?: EmbeddedCluster;
  close(): Promise<void>;
}

export async function resolveDatabaseUrl(config: Config, logger: Logger): Promise<{ url: string; embedded?: EmbeddedCluster }> {
  if (config.DATABASE_URL) {
    logger.info({ database: redactUrl(config.DATABASE_URL) }, 'using the database from DATABASE_URL');
    return { url: config.DATABASE_URL };
  }
  prepareDataDir(config.DATA_DIR);
  const embedded = await startEmbedded(config.DATA_DIR, logger);
  logger.info(
    { database: redactUrl(embedded.url), dir: path.join(config.DATA_DIR, 'postgres') },
    embedded.owned ? 'started embedded Postgres' : 'connected to the running embedded Postgres',
  );
  return { url: embedded.url, embedded };
}

export async function openDatabase(config: Config, logger: Logger, poolSize = 20): Promise<Database> {
  const { url, embedded } = await resolveDatabaseUrl(config, logger);
  const pool = createPool(url, poolSize);
  return {
    url,
    migrationUrl: embedded?.ownerUrl ?? url,
    pool,
    ...(embedded ? { embedded } : {}),
    async close() {
      await pool.end().catch(() => {});
      if (embedded?.owned) await embedded.stop();
    },
  };
}
