/**
 * One graphile-worker task per file. A task's payload is `unknown` until its zod schema parses it on
 * the first line, since old jobs in the queue may carry an old payload shape.
 */
import type { JobHelpers } from 'graphile-worker';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AppContext } from '../context.ts';

export interface TaskContext {
  app: AppContext;
  helpers: JobHelpers;
  /** The job's logger: the process logger with task, job id and attempt bound. */
  logger: Logger;
}

export interface TaskDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  payload: S;
  run(payload: z.infer<S>, ctx: TaskContext): Promise<void>;
}

export function defineTask<S extends z.ZodType>(def: TaskDefinition<S>): TaskDefinition<S> {
  return def;
}
