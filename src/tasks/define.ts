/**
 * One graphile-worker task per file, defined from its entry in the job catalogue
 * (src/jobs/catalogue.ts): the entry gives the name and the payload schema, the task the work. A
 * task's payload is `unknown` until that schema parses it on the first line, since old jobs in the
 * queue may carry an old payload shape.
 */
import type { JobHelpers } from 'graphile-worker';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { AppContext } from '../context.ts';
import type { JobType } from '../jobs/catalogue.ts';

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

/** The task of a catalogue entry: `defineTask(jobs.prune, { async run(payload, ctx) { ... } })`. */
export function defineTask<S extends z.ZodType>(job: JobType<string, S, never>, task: Pick<TaskDefinition<S>, 'run'>): TaskDefinition<S>;
/** A task outside the catalogue (tests register their own). */
export function defineTask<S extends z.ZodType>(def: TaskDefinition<S>): TaskDefinition<S>;
export function defineTask<S extends z.ZodType>(def: JobType<string, S, never> | TaskDefinition<S>, task?: Pick<TaskDefinition<S>, 'run'>): TaskDefinition<S> {
  return task ? { name: def.name, payload: def.payload, run: task.run } : (def as TaskDefinition<S>);
}
