/**
 * One server per DATA_DIR: `sigsync serve` holds DATA_DIR/server.lock (its pid) while it runs. A
 * second server on the same DATA_DIR (another PORT) would otherwise repoint the first one's sandbox
 * at its own emulators and share its embedded database; it refuses with one line instead.
 *
 * A lock whose process is gone (a crash, kill -9) or is no longer a sigsync process (its pid was
 * reused) is stale and taken over. The lock is created with O_EXCL, so of two servers starting at
 * once exactly one gets it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './configError.ts';

export const LOCK_FILE = 'server.lock';

export interface ServerLock {
  file: string;
  release(): void;
}

/** Takes DATA_DIR/server.lock, or throws a ConfigError naming the server that holds it. */
export function lockDataDir(dataDir: string): ServerLock {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o644);
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw e;
      const holder = Number.parseInt(readOr(file, ''), 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isSigsync(holder)) {
        throw new ConfigError(
          'DATA_DIR',
          'a directory no other server uses',
          `DATA_DIR: another sigsync server (pid ${holder}) is running on ${dataDir}; stop it first, or give this one its own DATA_DIR`,
        );
      }
      // Stale: its process is gone or is something else now. Only the lock is removed.
      fs.rmSync(file, { force: true });
    }
  }
  const release = () => {
    process.removeListener('exit', release);
    if (Number.parseInt(readOr(file, ''), 10) === process.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { file, release };
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

/** Whether `pid` is alive and runs `sigsync serve` (bin/sigsync.js with `serve` among its arguments). */
function isSigsync(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true; // no /proc (macOS): a live process is taken to be the server
  }
  const args = cmdline.split('\0');
  return args.some((a) => /(^|\/)bin\/sigsync\.js$/.test(a)) && args.includes('serve');
}
