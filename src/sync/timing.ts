/**
 * Where a run's time goes: milliseconds per named stage, summed over its pages and saved with each
 * page in the run's `stage_ms` (shown by `sigsync runs` and the sync benchmarks). Write stages are
 * named after the table they own (stage, match, teammates, addresses, memberships, values, seen,
 * events, photos, installs), `statistics` the ANALYZEs of stats.ts; `groups_wait` the wait for groups
 * asked for beside or after the listing (pendingGroups.ts); `fetch_wait` is the time a page's writer waited for the provider.
 */
export class StageTimer {
  readonly ms: Record<string, number>;

  constructor(start: Record<string, number> = {}) {
    this.ms = { ...start };
  }

  add(stage: string, ms: number): void {
    this.ms[stage] = Math.round(((this.ms[stage] ?? 0) + ms) * 10) / 10;
  }

  /** Runs one stage and adds its time, also when it throws. */
  async time<T>(stage: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.add(stage, performance.now() - t0);
    }
  }
}

/** The slowest stages of a run, as `name 1.2 s, ...` (the `sigsync runs` column). */
export function slowestStages(stageMs: Record<string, number> | null | undefined, n = 3): string {
  return Object.entries(stageMs ?? {})
    .filter(([, ms]) => ms >= 1)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([stage, ms]) => `${stage} ${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`)
    .join(', ');
}
