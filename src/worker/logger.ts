/** Bridges graphile-worker's logger onto pino, so worker output is JSON with the same redaction. */
import { Logger as GraphileLogger } from 'graphile-worker';
import type { Logger } from 'pino';

export function graphileLogger(logger: Logger): GraphileLogger {
  const base = logger.child({ component: 'worker' });
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...(meta ?? {}) };
    const lvl = level === 'warning' ? 'warn' : level === 'error' ? 'error' : level === 'debug' ? 'debug' : 'info';
    base[lvl](fields, message);
  });
}
