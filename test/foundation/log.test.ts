import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactLine, redactUrl } from '../../src/log.ts';

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

  it('redacts secret fields below four levels, in any case, inside errors and in child bindings', () => {
    const { logger, lines } = capture();
    const err = Object.assign(new Error('request failed'), { config: { headers: { AUTHORIZATION: 'Bearer SECRET6' } } });
    logger.child({ credentials: { token: 'SECRET7' } }).error({ err, a: { b: { c: { d: { e: { Client_Secret: 'SECRET8' } } } } } }, 'call failed');
    const text = lines.join('');
    expect(text).not.toMatch(/SECRET\d/);
    const line = JSON.parse(lines[0]!);
    expect(line.err.config.headers.AUTHORIZATION).toBe('[redacted]');
    expect(line.credentials).toBe('[redacted]');
    expect(line.a.b.c.d.e.Client_Secret).toBe('[redacted]');
    expect(line.err.message).toBe('request failed');
  });

  it('writes a line that names no secret field unchanged, and drops one it cannot parse', () => {
    const plain = '{"level":"info","msg":"a token was refreshed","tokens":3}\n';
    expect(redactLine(plain)).toBe(plain);
    const broken = redactLine('{"password":"SECRET9"\n');
    expect(broken).not.toContain('SECRET9');
    expect(broken.endsWith('\n')).toBe(true);
    expect(JSON.parse(broken).msg).toMatch(/could not be parsed/);
  });

  it('hides the password of a database URL', () => {
    expect(redactUrl('postgres://u:hunter2@h:5432/d')).toBe('postgres://u:****@h:5432/d');
  });
});
