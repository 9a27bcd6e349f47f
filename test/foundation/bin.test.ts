/**
 * `bin/sigsync.js` run the documented way without npx: through its shebang, with a user's PATH (the
 * system `node` first, older than the sources need on this machine). It runs itself again with the
 * Node pinned in node_modules, and hands back its output and exit code.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.ts';

/** PATH without the node_modules/.bin directories that npm and vitest put first. */
const userPath = (process.env.PATH ?? '')
  .split(path.delimiter)
  .filter((p) => !p.includes(`node_modules${path.sep}.bin`))
  .join(path.delimiter);
const env = { ...process.env, PATH: userPath };
const systemNode = execFileSync('node', ['--version'], { env, encoding: 'utf8' }).trim();
const [major, minor] = systemNode.slice(1).split('.').map(Number) as [number, number];

function run(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bin/sigsync.js without npx', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sigsync-bin-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('runs on the system node of this machine, which is older than the sources need', () => {
    expect(major < 22 || (major === 22 && minor < 18), `system node ${systemNode}`).toBe(true);
  });

  it('prints the usage with exit 0, and passes on a usage error with its one line and exit 2', async () => {
    const help = await run(BIN, ['--help']);
    expect(help.stderr).toBe('');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: sigsync \[options\] \[command\]/);
    const bad = await run(BIN, ['webhook', 'list', '--bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("error: unknown option '--bogus'\n(run sigsync webhook list --help for usage)\n");
  });

  it('says what to do, with exit 2, where no newer Node is installed', async () => {
    const lone = path.join(dir, 'bin', 'sigsync.js');
    fs.mkdirSync(path.dirname(lone), { recursive: true });
    fs.copyFileSync(BIN, lone);
    const r = await run('node', [lone, '--help']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^sigsync needs Node >= 22\.18 \(this is v\d+\.\d+\.\d+\) and found no newer Node in node_modules; run npm ci/);
  });
});
