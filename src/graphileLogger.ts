/**
 * Bridges graphile-worker's logger onto pino, so worker output is JSON with the same redaction.
 *
 * graphile-worker logs every completed job at info with the whole job row (its payload included):
 * hundreds of lines for one fan-out. Here a completed job is a `debug` line, and a job row in any
 * line is reduced to its id, task and attempt; the fan-out tasks log one summary line at info.
 * A job that failed because its worker was stopping (runner.ts records its error in
 * `failedByStop`) runs again later: its line is at info, without the stack.
 */
import { Logger as GraphileLogger } from 'graphile-worker';
import type { Logger } from 'pino';

interface JobLike {
  id?: unknown;
  task_identifier?: unknown;
  attempts?: unknown;
  max_attempts?: unknown;
}

function slimJob(job: JobLike) {
  return { id: job.id, task: job.task_identifier, attempts: job.attempts, max_attempts: job.max_attempts };
}

/** Errors of jobs that failed because their worker was stopping (its abort signal): expected, and retried. */
export const failedByStop = new WeakSet<object>();

export function graphileLogger(logger: Logger): GraphileLogger {
  const base = logger.child({ component: 'worker' });
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields: Record<string, unknown> = { ...scope, ...(meta ?? {}) };
    if (fields.job && typeof fields.job === 'object') fields.job = slimJob(fields.job as JobLike);
    if (typeof fields.error === 'object' && fields.error !== null && failedByStop.has(fields.error)) {
      // graphile-worker appends the stack after ":\n"; the message before it says what happened.
      base.info(fields, message.split(':\n')[0]);
      return;
    }
    const completed = message.startsWith('Completed task ');
    const lvl = completed ? 'debug' : level === 'warning' ? 'warn' : level === 'error' ? 'error' : level === 'debug' ? 'debug' : 'info';
    base[lvl](fields, message);
  });
}
