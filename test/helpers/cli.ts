/** Runs the real `sigsync` CLI as a child process (bin/sigsync.js on this Node). */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(import.meta.dirname, '../../bin/sigsync.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment for a child: this one minus anything that would change config, plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const k of ['DATABASE_URL', 'PORT', 'HOST', 'DATA_DIR', 'ENCRYPTION_KEY', 'LOG_LEVEL', 'PUBLIC_BASE_URL', 'SANDBOX']) delete base[k];
  return { ...base, ...env };
}

/** Runs a command to its end and collects its output; it is killed after `timeoutMs`. */
export function runProcess(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: opts.env ?? process.env, ...(opts.cwd ? { cwd: opts.cwd } : {}), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? DEADLINE_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs `sigsync` with the test environment plus `env`. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = DEADLINE_MS): Promise<CliResult> {
  return runProcess(process.execPath, [BIN, ...args], { env: childEnv(env), timeoutMs });
}

export function spawnCli(args: string[], env: Record<string, string> = {}): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return Object.assign(child, { output: () => output });
}

/**
 * How long a test waits for a state before it gives up: generous, because a busy machine (CI, or
 * a developer's) can be several times slower than an idle one. Tests wait for the state they
 * assert, never for a span of time, so an idle machine does not wait longer for it.
 */
export const DEADLINE_MS = 180_000;

/** The timeout of a test that waits for several such states (a crash or shutdown scenario). */
export const HEAVY_TEST_MS = 600_000;

/** Polls `fn` until it returns something truthy, for at most `timeoutMs`. */
export async function waitFor<T>(fn: () => Promise<T | undefined | false>, timeoutMs = DEADLINE_MS, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      lastErr = e;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${lastErr ? `: ${String(lastErr)}` : ''}`);
}
