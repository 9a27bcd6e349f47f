/** When `serve` runs the sandbox: SANDBOX decides; unset, only without DATABASE_URL. How its welcome writes CLI commands. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { cliCommand, sandboxEnabled } from '../../src/sandbox/demo.ts';
import { runProcess } from '../helpers/cli.ts';

describe('SANDBOX', () => {
  const enabled = (env: Record<string, string>) => sandboxEnabled(loadConfig(env));
  it('is on by default without DATABASE_URL and off with it', () => {
    expect(enabled({})).toBe(true);
    expect(enabled({ DATABASE_URL: 'postgres://u@127.0.0.1/db' })).toBe(false);
  });
  it('SANDBOX=0 turns it off and SANDBOX=1 turns it on even with DATABASE_URL', () => {
    expect(enabled({ SANDBOX: '0' })).toBe(false);
    expect(enabled({ SANDBOX: 'false' })).toBe(false);
    expect(enabled({ SANDBOX: '1', DATABASE_URL: 'postgres://u@127.0.0.1/db' })).toBe(true);
  });
  it('a bad value names the variable', () => {
    expect(() => loadConfig({ SANDBOX: 'maybe' })).toThrow(/^SANDBOX: invalid value/);
  });
});

describe("the welcome's CLI commands", () => {
  it('carry a DATA_DIR that is not the default, quoted for the shell; the default one needs nothing', async () => {
    expect(cliCommand(path.resolve('.data'))).toBe('./bin/sigsync.js');
    expect(cliCommand('/tmp/sigsync-demo-x1', '/elsewhere')).toBe('DATA_DIR=/tmp/sigsync-demo-x1 ./bin/sigsync.js');
    for (const dir of ['/tmp/plain', "/tmp/it's here", '/tmp/a b/$HOME `id` "q"']) {
      // What the shell hands the command as DATA_DIR is the directory itself.
      const echoed = await runProcess('sh', ['-c', cliCommand(dir, '/elsewhere').replace('./bin/sigsync.js', 'printenv DATA_DIR')]);
      expect(echoed.stdout, dir).toBe(`${dir}\n`);
    }
  });
});
