import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { runCli } from '../helpers/cli.ts';
import { configError } from '../helpers/config.ts';

describe('configuration', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ HOST: '127.0.0.1', PORT: 3000, LOG_LEVEL: 'info', WORKER_CONCURRENCY: 10, DIRECTORY_SYNC_CRON: '0 2 * * *' });
    expect(c.DATA_DIR).toBe(path.resolve('.data'));
    expect(c.PUBLIC_BASE_URL).toBe('http://127.0.0.1:3000');
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it.each([
    ['PORT', 'abc', /PORT.*integer from 0 to 65535/],
    ['PORT', '70000', /PORT.*integer from 0 to 65535/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL.*one of fatal, error/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL.*postgres:\/\//],
    ['WORKER_CONCURRENCY', '0', /WORKER_CONCURRENCY.*1 to 100/],
    ['DIRECTORY_SYNC_CRON', 'nightly', /DIRECTORY_SYNC_CRON.*cron/],
    ['ENCRYPTION_KEY', 'short', /ENCRYPTION_KEY.*32 bytes/],
    ['PUBLIC_BASE_URL', 'not a url', /PUBLIC_BASE_URL.*absolute/],
  ])('rejects %s=%s with a line naming the variable', (name, value, message) => {
    const err = configError({ [name]: value });
    expect(err.variable).toBe(name);
    expect(err.message).toMatch(message);
  });

  it('treats empty variables as unset', () => {
    const c = loadConfig({ PORT: '', DATABASE_URL: '' });
    expect(c.PORT).toBe(3000);
    expect(c.DATABASE_URL).toBeUndefined();
  });

  it('PORT=abc makes the CLI print one line naming PORT and exit 2 without a stack trace', async () => {
    const r = await runCli(['serve'], { PORT: 'abc' });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^PORT: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([['serve'], ['runs'], ['webhook', 'list']])('LOG_LEVEL=verbose makes sigsync %s print one line naming LOG_LEVEL and exit 2', async (...args) => {
    const r = await runCli(args, { LOG_LEVEL: 'verbose' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('LOG_LEVEL: invalid value; expected one of fatal, error, warn, info, debug, trace, silent\n');
    expect(r.stdout).toBe('');
  });
});
