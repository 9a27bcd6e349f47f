/** graphile-worker's lines through the pino bridge: completed jobs at debug, never with their payload. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { failedByStop, graphileLogger } from '../../src/graphileLogger.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: graphileLogger(createLogger(level, sink)) };
}

const job = { id: '42', task_identifier: 'install_mailbox', attempts: 1, max_attempts: 25, payload: { emailId: 'e-1', html: 'x'.repeat(5000) } };

describe('graphile-worker log lines', () => {
  it('logs a completed job at debug with its id and task, not its payload; nothing at info', () => {
    const info = capture('info');
    info.logger.info('Completed task 42 (install_mailbox, 3.10ms) with success', { job, duration: 3.1, success: true });
    expect(info.lines).toEqual([]);

    const debug = capture('debug');
    debug.logger.info('Completed task 42 (install_mailbox, 3.10ms) with success', { job, duration: 3.1, success: true });
    expect(debug.lines).toHaveLength(1);
    expect(debug.lines[0]).toMatchObject({ level: 'debug', component: 'worker', job: { id: '42', task: 'install_mailbox', attempts: 1 } });
    expect(JSON.stringify(debug.lines[0])).not.toContain('xxxxx');
  });

  it('keeps failures at their level, with the job reduced to its id and task', () => {
    const info = capture('info');
    info.logger.error('Failed task 42 (install_mailbox, 3.10ms) with error boom', { job, failure: true });
    expect(info.lines).toHaveLength(1);
    expect(info.lines[0]).toMatchObject({ level: 'error', job: { id: '42', task: 'install_mailbox' } });
    expect(JSON.stringify(info.lines[0])).not.toContain('emailId');
  });

  it('logs a job that failed because its worker was stopping at info, without the stack', () => {
    const info = capture('info');
    const error = new Error('the worker stopped while this run was waiting on the provider');
    failedByStop.add(error);
    info.logger.error(`Failed task 42 (sync_integration, 3.10ms, attempt 1 of 10) with error '${error.message}':\n  ${error.stack}`, {
      job,
      failure: true,
      error,
    });
    expect(info.lines).toHaveLength(1);
    expect(info.lines[0]).toMatchObject({ level: 'info', msg: `Failed task 42 (sync_integration, 3.10ms, attempt 1 of 10) with error '${error.message}'` });
    expect(JSON.stringify(info.lines[0])).not.toContain(' at ');
  });
});
