/** When `serve` runs the sandbox: SANDBOX decides; unset, only without DATABASE_URL. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { sandboxEnabled } from '../../src/sandbox/demo.ts';

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
