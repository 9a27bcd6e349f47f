/**
 * Run by groupSignal.test.ts, in a process group of its own: starts embedded Postgres on a fresh
 * DATA_DIR (initdb, then the postmaster) while another process sends SIGINT to this group without
 * pause, from the moment initdb is about to start until Postgres has written its first line (or
 * FLOOD_S have passed). This
 * process handles SIGINT (as `serve` does while it starts), so only the children can die of it.
 * Prints one JSON line: the signals this process got and the children started again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { startEmbedded } from '../../src/db/embedded.ts';

const dataDir = process.argv[2]!;
let signals = 0;
let respawns = 0;
process.on('SIGINT', () => signals++);

let blaster: ChildProcess | undefined;
const blasting = path.join(dataDir, 'blasting');
/**
 * The flood ends by itself after this long, as well as when Postgres writes its first line: on a
 * loaded machine a flood can keep this process from running long enough to see that line (one CI
 * run spent its 60 s of respawns on 4 attempts under 3.8 million signals), and Ctrl-C is never a
 * flood that long.
 */
const FLOOD_S = 15;
function startBlaster(): void {
  const flood = `touch '${blasting}'; while kill -INT -${process.pid}; do :; done`;
  blaster = spawn('timeout', [String(FLOOD_S), 'sh', '-c', flood], { detached: true, stdio: 'ignore' });
  // Synchronously, so that nothing of the start runs before the signals do.
  const until = Date.now() + 60_000;
  while (!fs.existsSync(blasting) && Date.now() < until);
}
function stopBlaster(): void {
  // The blaster's group: `timeout` and the shell it runs.
  if (blaster?.pid) process.kill(-blaster.pid, 'SIGKILL');
  blaster = undefined;
}

const logger = pino(
  { level: 'debug' },
  {
    write(line: string) {
      const { msg, component } = JSON.parse(line) as { msg: string; component?: string };
      if (msg === 'initialising embedded Postgres cluster') startBlaster();
      else if (msg.includes('starting it again')) respawns++;
      else if (component === 'postgres') stopBlaster();
    },
  },
);

try {
  fs.mkdirSync(dataDir, { recursive: true });
  const cluster = await startEmbedded(dataDir, logger);
  await cluster.stop();
  process.stdout.write(`${JSON.stringify({ started: true, signals, respawns })}\n`);
} catch (err) {
  process.stdout.write(`${JSON.stringify({ started: false, signals, respawns, error: String(err) })}\n`);
  process.exitCode = 1;
} finally {
  stopBlaster();
}
