/** `sync --follow` progress: the lines written on a pipe, and what they say about a run that saw no one. */
import { describe, expect, it } from 'vitest';
import { lineProgress } from '../../src/cli/progress.ts';
import type { SyncRunRow } from '../../src/integrations/syncRuns.ts';

const run = (over: Partial<SyncRunRow>): SyncRunRow =>
  ({ id: 'r1', status: 'running', mode: 'full', pages: 0, seen: 0, created: 0, updated: 0, deleted: 0, ...over }) as SyncRunRow;

describe('sync progress on a pipe', () => {
  it('prints a line per change, with the estimate while running and the count once done; an incremental run that saw 0 people says 0 users', () => {
    const lines: string[] = [];
    const p = lineProgress([{ id: 'r1', name: 'Microsoft Entra ID', estimate: 11 }], (l) => lines.push(l));
    p.update(run({}));
    p.update(run({}));
    p.update(run({ seen: 5, pages: 1, updated: 1 }));
    p.update(run({ status: 'succeeded', mode: 'delta', pages: 1, seen: 0 }));
    p.stop();
    expect(lines).toEqual([
      'Microsoft Entra ID: 0/11 users · pages 0 · +0 ~0 -0 · running',
      'Microsoft Entra ID: 5/11 users · pages 1 · +0 ~1 -0 · running',
      'Microsoft Entra ID: 0 users · pages 1 · +0 ~0 -0 · succeeded (incremental)',
    ]);
  });
});
