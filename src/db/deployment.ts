/**
 * The deployment's own settings, one row of `deployment`, checked and recorded as each process opens
 * its context (src/context.ts):
 *
 * - the ENCRYPTION_KEY's fingerprint: the first process records it; a process with another key
 *   stops with one line instead of writing credentials nobody else can read. A database that already
 *   holds credentials from before the fingerprint was kept is checked against one of them.
 * - the public base URL: links installed into mailboxes (tracked links, view images, assets) name
 *   it, so every process must render the same one. The API server (`api`, `serve`) records its
 *   PUBLIC_BASE_URL (or the http://HOST:PORT it listens at); a worker records an explicit
 *   PUBLIC_BASE_URL and otherwise reads the recorded one; the CLI only reads it, and refuses an
 *   explicit value that disagrees with it. docs/production.md "The public URL".
 */
import type { Logger } from 'pino';
import { ConfigError } from '../configError.ts';
import type { Secrets } from '../crypto/secrets.ts';
import type { Queryable } from './tx.ts';

/** Which kind of process is starting: it decides who may record the public base URL. */
export type ProcessRole = 'server' | 'worker' | 'cli';

interface DeploymentRow {
  key_fingerprint: string | null;
  public_base_url: string | null;
}

async function row(db: Queryable): Promise<DeploymentRow> {
  const { rows } = await db.query<DeploymentRow>('select key_fingerprint, public_base_url from deployment where id');
  return rows[0] ?? { key_fingerprint: null, public_base_url: null };
}

const WRONG_KEY =
  'ENCRYPTION_KEY: not the key this database was set up with (its fingerprint differs); give this process the same ENCRYPTION_KEY as the others (docs/production.md "The encryption key")';

/**
 * One credential stored in the database (any integration's), or undefined: what a database from
 * before the fingerprint was kept is checked against. The integrations' owner reads it
 * (src/integrations/queries.ts, anyStoredCredential); this store module cannot, so it is passed in.
 */
export type StoredCredential = (db: Queryable) => Promise<Buffer | undefined>;

/** Records the key's fingerprint, or stops (ConfigError, exit 2) when the database knows another key. */
export async function checkKeyFingerprint(db: Queryable, secrets: Secrets, logger: Logger, storedCredential: StoredCredential): Promise<void> {
  const mine = secrets.fingerprint();
  const stored = (await row(db)).key_fingerprint;
  if (stored === mine) return;
  if (stored) throw new ConfigError('ENCRYPTION_KEY', 'the key this database was set up with', WRONG_KEY);
  // No fingerprint yet: a new database, or one from before it was kept. Credentials stored there
  // name the key they were written with.
  const credential = await storedCredential(db);
  if (credential && !secrets.ownsCiphertext(credential)) throw new ConfigError('ENCRYPTION_KEY', 'the key this database was set up with', WRONG_KEY);
  const { rowCount } = await db.query(
    `insert into deployment (id, key_fingerprint) values (true, $1)
     on conflict (id) do update set key_fingerprint = $1, updated_at = now() where deployment.key_fingerprint is null`,
    [mine],
  );
  if (rowCount === 1) logger.info({ key_fingerprint: mine }, 'recorded the encryption key fingerprint for this database');
  // Another process recorded one at the same moment: it must be this one.
  else if ((await row(db)).key_fingerprint !== mine) throw new ConfigError('ENCRYPTION_KEY', 'the key this database was set up with', WRONG_KEY);
}

/**
 * The public base URL this process renders with (module comment). `explicit` is whether
 * PUBLIC_BASE_URL was set; `configured` is its value or the http://HOST:PORT default.
 */
export async function resolvePublicBaseUrl(db: Queryable, opts: { role: ProcessRole; configured: string; explicit: boolean; logger: Logger }): Promise<string> {
  const stored = (await row(db)).public_base_url;
  const records = opts.role === 'server' || (opts.role === 'worker' && opts.explicit);
  if (records) {
    if (stored !== opts.configured) {
      await db.query(`insert into deployment (id, public_base_url) values (true, $1) on conflict (id) do update set public_base_url = $1, updated_at = now()`, [
        opts.configured,
      ]);
      if (stored)
        opts.logger.warn(
          { previous: stored, public_base_url: opts.configured },
          'the deployment public base URL changed; links installed from now on name the new one',
        );
      else opts.logger.info({ public_base_url: opts.configured }, 'recorded the deployment public base URL');
    }
    return opts.configured;
  }
  if (!stored) {
    if (opts.role === 'worker')
      opts.logger.warn({ public_base_url: opts.configured }, 'no public base URL recorded yet (start the API, or set PUBLIC_BASE_URL); using this one');
    return opts.configured;
  }
  if (opts.explicit && stored !== opts.configured) {
    throw new ConfigError(
      'PUBLIC_BASE_URL',
      stored,
      `PUBLIC_BASE_URL: ${opts.configured} differs from ${stored}, the public URL the API server recorded for this deployment; unset it here, or restart the API with the new value`,
    );
  }
  return stored;
}
