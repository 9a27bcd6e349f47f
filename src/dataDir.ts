/**
 * DATA_DIR checked before anything is written under it (the embedded cluster, the generated key, the
 * sandbox's record): an unusable path stops the process with one line (ConfigError, exit 2).
 *
 * The directory is made one level at a time below its nearest existing ancestor: Node's recursive
 * mkdir loops without end under /proc (`DATA_DIR=/proc/nope` spun a core and printed nothing).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './configError.ts';

const fail = (dir: string, why: string) =>
  new ConfigError('DATA_DIR', 'a directory this user can create and write', `DATA_DIR: cannot use ${dir}: ${why}; choose another DATA_DIR`);

const reason = (err: unknown) => {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code} ${e.syscall ?? ''}`.trim() : e.message;
};

/** Makes `dir` (absolute) if it is missing and checks that this user can write it. */
export function prepareDataDir(dir: string): void {
  const missing: string[] = [];
  let at = dir;
  for (;;) {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(at);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw fail(dir, `${at}: ${reason(err)}`);
    }
    if (stat) {
      if (!stat.isDirectory()) throw fail(dir, `${at} is not a directory`);
      break;
    }
    missing.unshift(at);
    const parent = path.dirname(at);
    if (parent === at) throw fail(dir, 'no part of the path exists');
    at = parent;
  }
  for (const d of missing) {
    try {
      fs.mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw fail(dir, `making ${d} failed (${reason(err)})`);
    }
  }
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
    // Root passes access() everywhere; a file made and removed proves the directory takes writes.
    const probe = path.join(dir, `.write-check-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (err) {
    throw fail(dir, `it is not writable by this user (${reason(err)})`);
  }
}
