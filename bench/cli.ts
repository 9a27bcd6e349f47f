/**
 * `cli`: how long a support engineer waits for the CLI, and how much noise it prints. A `serve` with
 * the sandbox runs in a temporary DATA_DIR (embedded Postgres, the "Acme" demo); then each command is
 * run the documented way without npx — `bin/sigsync.js` through its shebang, with the system's `node`
 * first on PATH (an older Node makes it run itself again with the pinned one) — and timed from spawn
 * to exit:
 *   - `sigsync --help` (goal ≤ 0.5 s of wall time);
 *   - `sigsync install status --email hannah.cole@acme.test` and `sigsync runs`, which query the
 *     database of the running server (goal ≤ 1.5 s each);
 *   - npm noise: lines starting with `npm warn`/`npm notice`/`npm error` in all of their output (goal 0).
 * For comparison: `help_pinned_node_s` is `--help` started by the pinned Node directly (the
 * difference is what running itself again costs), and `npx_noise_lines` counts the noise of one
 * `npx sigsync --help`.
 *
 *   npm run bench -- cli [--repeat 5]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchArgs, Figures } from './types.ts';
import { median, round } from './stats.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'sigsync.js');
const NPM_NOISE = /^npm (warn|notice|error|WARN|ERR)/i;
const GOALS = { help_s: 0.5, install_status_s: 1.5, runs_s: 1.5 };

/** PATH as a shell has it: without the node_modules/.bin directories npm run puts first. */
function userPath(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((p) => !p.includes(`node_modules${path.sep}.bin`))
    .join(path.delimiter);
}

interface Timed {
  seconds: number;
  code: number | null;
  output: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ seconds: (performance.now() - started) / 1000, code, output }));
  });
}

async function startServer(dataDir: string, log: (l: string) => void): Promise<() => Promise<void>> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', SANDBOX: '1', LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const node = path.join(ROOT, 'node_modules', '.bin', 'node');
  const child = spawn(node, [BIN, 'serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('Sandbox workspace "Acme" is ready.')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`serve exited ${code} before the sandbox was ready:\n${output.slice(-2000)}`)));
  });
  log('the server and its sandbox are ready');
  return async () => {
    child.kill('SIGTERM');
    await exited;
  };
}

export async function cliScenario({ quick, options, log }: BenchArgs): Promise<Figures> {
  const repeat = Number(options.repeat ?? (quick ? 3 : 5));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-bench-cli-'));
  // Embedded Postgres runs as the postgres user when this runs as root.
  fs.chmodSync(dataDir, 0o755);
  const stop = await startServer(dataDir, log);
  // A user's shell: no npm_* variables from `npm run`, no DATABASE_URL or LOG_LEVEL of this process.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('npm_') && k !== 'DATABASE_URL' && k !== 'LOG_LEVEL'),
  );
  Object.assign(env, { PATH: userPath(), DATA_DIR: dataDir });
  const failures: string[] = [];
  let noise = 0;
  try {
    const commands: [keyof typeof GOALS, string[]][] = [
      ['help_s', ['--help']],
      ['install_status_s', ['install', 'status', '--email', 'hannah.cole@acme.test']],
      ['runs_s', ['runs']],
    ];
    const figures: Record<string, number> = {};
    for (const [name, args] of commands) {
      const times: number[] = [];
      for (let i = 0; i <= repeat; i++) {
        const r = await run(BIN, args, env);
        if (r.code !== 0) failures.push(`sigsync ${args.join(' ')} exited ${r.code}: ${r.output.slice(-500)}`);
        noise += r.output.split('\n').filter((l) => NPM_NOISE.test(l)).length;
        if (i > 0) times.push(r.seconds); // the first run warms the compile cache
      }
      figures[name] = round(median(times), 3);
      log(`sigsync ${args.join(' ')}: median ${figures[name]} s over ${repeat} runs`);
    }
    // The same --help started by the pinned Node directly: what running itself again costs.
    const pinned: number[] = [];
    for (let i = 0; i <= repeat; i++) {
      const r = await run(path.join(ROOT, 'node_modules', 'node', 'bin', 'node'), [BIN, '--help'], env);
      if (i > 0) pinned.push(r.seconds);
    }
    figures.help_pinned_node_s = round(median(pinned), 3);
    const npx = await run('npx', ['--no-install', 'sigsync', '--help'], env);
    const npxNoise = npx.output.split('\n').filter((l) => NPM_NOISE.test(l)).length;
    const ratios = Object.fromEntries(Object.entries(GOALS).map(([k, goal]) => [k, round(figures[k]! / goal, 2)]));
    const ratio = Math.max(...Object.values(ratios));
    return {
      ...figures,
      noise_lines: noise,
      npx_noise_lines: npxNoise,
      node: process.version,
      system_node_first: true,
      goals: { ...GOALS, noise_lines: 0 },
      ratios,
      ratio,
      met: ratio <= 1 && noise === 0,
      repeat,
      failures,
    };
  } finally {
    await stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
