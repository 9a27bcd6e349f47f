/**
 * Progress of sync runs for `sigsync sync --follow`: a bar per run on a terminal (cli-progress), and
 * on a pipe or a CI log one plain line per change (no cursor movement, no template placeholders).
 * Both go to stderr, like cli-progress; the final counters go to stdout.
 */
import type { SyncRunRow } from '../integrations/syncRuns.ts';

export interface RunProgress {
  /** Shows the latest state of a run. */
  update(run: SyncRunRow): void;
  stop(): void;
}

interface Tracked {
  id: string;
  name: string;
  /** Users the last succeeded run saw: the bar's length until this run passes it. */
  estimate: number;
}

/** `seen/estimate users` while running; `seen users` once the run ended (an incremental run may see 0). */
function usersText(run: Pick<SyncRunRow, 'seen' | 'status'>, estimate: number): string {
  return run.status === 'running' ? `${run.seen}/${Math.max(estimate, run.seen)} users` : `${run.seen} user${run.seen === 1 ? '' : 's'}`;
}

const changes = (r: SyncRunRow) => `pages ${r.pages} · +${r.created} ~${r.updated} -${r.deleted}`;

export function lineProgress(runs: Tracked[], write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): RunProgress {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const last = new Map<string, string>();
  return {
    update(run) {
      const t = byId.get(run.id);
      if (!t) return;
      const line = `${t.name}: ${usersText(run, t.estimate)} · ${changes(run)} · ${run.status}${run.mode === 'delta' ? ' (incremental)' : ''}`;
      if (last.get(run.id) === line) return;
      last.set(run.id, line);
      write(line);
    },
    stop() {},
  };
}

export async function barProgress(runs: Tracked[]): Promise<RunProgress> {
  const { default: cliProgress } = await import('cli-progress');
  const bars = new cliProgress.MultiBar(
    { format: '{name} |{bar}| {users} · {changes} · {status}', hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  const byId = new Map(
    runs.map((r) => [
      r.id,
      {
        ...r,
        bar: bars.create(Math.max(r.estimate, 1), 0, {
          name: r.name,
          users: usersText({ seen: 0, status: 'running' }, r.estimate),
          changes: 'pages 0',
          status: 'running',
        }),
      },
    ]),
  );
  return {
    update(run) {
      const t = byId.get(run.id);
      if (!t) return;
      const total = run.status === 'running' ? Math.max(t.estimate, run.seen, 1) : Math.max(run.seen, 1);
      t.bar.setTotal(total);
      t.bar.update(run.status === 'running' ? run.seen : total, { name: t.name, users: usersText(run, t.estimate), changes: changes(run), status: run.status });
    },
    stop: () => bars.stop(),
  };
}

/** Bars on a terminal, lines otherwise. */
export async function runProgress(runs: Tracked[], tty = process.stderr.isTTY === true): Promise<RunProgress> {
  return tty ? barProgress(runs) : lineProgress(runs);
}
