import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from '../../src/log.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: createLogger('info', stream), lines };
}

describe('logging', () => {
  it('writes JSON with level names and ISO time', () => {
    const { logger, lines } = capture();
    logger.info('hello');
    const line = JSON.parse(lines[0]!);
    expect(line.level).toBe('info');
    expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('redacts authorization headers, tokens, keys and credentials at any depth', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        headers: { authorization: 'Bearer sgs_SECRET1' },
        token: 'SECRET2',
        nested: { config: { private_key: 'SECRET3', client_secret: 'SECRET4' } },
        credentials: { refresh_token: 'SECRET5' },
      },
      'call',
    );
    expect(lines.join('')).not.toMatch(/SECRET\d/);
    expect(lines.join('')).toContain('[redacted]');
  });

  it('hides the password of a database URL', () => {
    expect(redactUrl('postgres://u:hunter2@h:5432/d')).toBe('postgres://u:****@h:5432/d');
  });
});
