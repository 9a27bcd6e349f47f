/**
 * A logger whose lines a test reads: the process's logger (`createLogger`, with its redaction of
 * secret fields), or a bare pino logger that writes only what the code under test gave it.
 */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { createLogger } from '../../src/log.ts';

/**
 * A logger at `level` (the most verbose by default) writing each JSON line into `lines`. With
 * `redact: false` it is a bare pino logger without the process's redaction: for tests that check
 * what a connector itself writes.
 */
export function captureLogger(opts: { level?: string; redact?: boolean } = {}): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const level = opts.level ?? 'trace';
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: opts.redact === false ? pino({ level }, sink) : createLogger(level, sink), lines };
}
