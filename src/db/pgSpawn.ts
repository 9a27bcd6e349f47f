/**
 * Running initdb and the postmaster outside this process's group, so that the SIGINT a terminal
 * sends to its foreground group on Ctrl-C reaches this process only: Postgres is stopped by this
 * process, after the pool has closed, never under it.
 *
 * A child leaves the group in its first instant (setsid between fork and exec), and a signal sent
 * to the group in that instant still reaches it: libuv blocks signals across the fork, so the
 * signal waits, pending, until the child restores the default handlers just before exec, and then
 * kills it. Such a child ran nothing (no output) and this process never signalled it; it is
 * started again (`respawning`), so a Ctrl-C during the first start stops the server once started
 * instead of failing initdb.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';

export interface PgUser {
  uid?: number;
  gid?: number;
}

/** A child caught by the group's signal before it left the group: see `respawning`. */
export const CAUGHT_IN_SPAWN = Symbol('caught in spawn');

/**
 * How long children caught in spawn are started again. A Ctrl-C is one to three signals (the
 * terminal's, and those that npm and the launcher forward); only a flood of them lasts longer.
 */
const RESPAWN_FOR_MS = 60_000;

/**
 * Runs initdb or the postmaster in a session of its own (`detached`). Output goes to `log` line by
 * line, and is kept in `lines` (at most `keep`).
 */
export function spawnPg(file: string, args: string[], user: PgUser, log: (line: string) => void): { child: ChildProcess; lines: string[] } {
  const child = spawn(file, args, { ...user, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
  // Outside this process's group, it is not signalled with it: if this process exits first (an
  // uncaught error, a second Ctrl-C), it asks the child to stop (initdb then removes its half-made
  // cluster; the postmaster does a fast shutdown).
  const stopOnExit = () => child.kill('SIGINT');
  process.on('exit', stopOnExit);
  child.on('exit', () => process.removeListener('exit', stopOnExit));
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    let pending = '';
    stream.on('data', (chunk: Buffer) => {
      const split = (pending + chunk.toString('utf8')).split('\n');
      pending = split.pop()!;
      for (const line of split) {
        if (!line.trim()) continue;
        if (lines.length < 200) lines.push(line);
        log(line);
      }
    });
  }
  return { child, lines };
}

/** Whether an exited child died of a signal before it wrote anything, a signal this process did not send. */
export function caughtInSpawn(child: ChildProcess, lines: readonly string[]): boolean {
  return child.signalCode !== null && !child.killed && lines.length === 0;
}

/** Runs `attempt` again while it answers CAUGHT_IN_SPAWN (within RESPAWN_FOR_MS). */
export async function respawning<T>(what: string, logger: Logger, attempt: () => Promise<T | typeof CAUGHT_IN_SPAWN>): Promise<T> {
  const until = Date.now() + RESPAWN_FOR_MS;
  for (let n = 1; ; n++) {
    const result = await attempt();
    if (result !== CAUGHT_IN_SPAWN) return result;
    if (Date.now() > until) throw new Error(`embedded Postgres: ${what} was stopped by a signal as it started, ${n} times`);
    logger.debug({ attempt: n }, `${what} was stopped by a signal sent to this process group before it left it; starting it again`);
  }
}

/** The last lines of a Postgres tool's output that say what went wrong (not initdb's SQL). */
export function failure(lines: string[]): string {
  const said = lines.filter((l) => /\b(FATAL|ERROR|PANIC|error|could not|cannot|invalid)\b/.test(l));
  return (said.length ? said : lines).slice(-3).join(' | ') || 'no output';
}
