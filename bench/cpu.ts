/**
 * CPU seconds per process, beside wall time: on a shared machine they are stabler than wall time,
 * and they say whose cost it is.
 *
 *   worker    this process (the engine or the worker under test, and the benchmark's driver), and
 *             the worker processes a scenario started, when it runs them apart
 *   postgres  the postmaster and every backend, including backends that exited in between (their
 *             time moves into the postmaster's "children" figures when it reaps them)
 *   emulator  the emulated tenant's own process
 *
 * Read from /proc (Linux). Postgres is found through a backend's parent, so a DATABASE_URL on this
 * host is measured too; a server elsewhere, or no /proc, reports null.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type pg from 'pg';
import { median, round } from './stats.ts';

let ticks: number | undefined;
function ticksPerSecond(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

interface ProcStat {
  ppid: number;
  /** utime + stime, in ticks. */
  self: number;
  /** cutime + cstime (reaped children), in ticks. */
  children: number;
}

function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after its end.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(f[1]), self: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
}

/** CPU seconds of a process, with its children (live ones and those it reaped). */
export function treeCpuSeconds(pid: number): number | null {
  const root = readStat(pid);
  if (!root) return null;
  let total = root.self + root.children;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s?.ppid === pid) total += s.self + s.children;
  }
  return total / ticksPerSecond();
}

/**
 * CPU seconds of a process and every process below it, live or reaped: a browser's renderers are
 * its grandchildren (under its zygote), which treeCpuSeconds does not reach.
 */
export function processTreeCpuSeconds(pid: number): number | null {
  const stats = new Map<number, ProcStat>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = readStat(Number(entry));
    if (s) stats.set(Number(entry), s);
  }
  if (!stats.has(pid)) return null;
  const below = new Map<number, number[]>();
  for (const [child, s] of stats) below.set(s.ppid, [...(below.get(s.ppid) ?? []), child]);
  let total = 0;
  for (const todo = [pid]; todo.length;) {
    const p = todo.pop()!;
    const s = stats.get(p)!;
    total += s.self + s.children;
    todo.push(...(below.get(p) ?? []));
  }
  return total / ticksPerSecond();
}

/** A child of `parent` whose executable's path matches `command` (the browser a library started), or null. */
export function childPid(parent: number, command: RegExp): number | null {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || readStat(Number(entry))?.ppid !== parent) continue;
    try {
      if (command.test(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0]!)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** The postmaster's pid when the database runs on this host and /proc shows it, else null. */
export async function postmasterPid(pool: pg.Pool): Promise<number | null> {
  const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
  const stat = readStat(rows[0]!.pid);
  return stat ? stat.ppid : null;
}

export interface CpuFigures {
  /** Wall seconds over the same span. */
  wall_s: number;
  worker_cpu_s: number;
  postgres_cpu_s: number | null;
  emulator_cpu_s: number | null;
  /** Emulator CPU ÷ worker CPU: the benchmark measures the worker only while this stays under 0.1. */
  emulator_share: number | null;
  /** The machine's 1-minute load average at the end, and its cores: how busy it was. */
  load_avg_1m: number;
  cores: number;
}

/**
 * Starts measuring; the returned function gives the CPU seconds of each process since then.
 * `emulatorPid` null: the emulator runs in the worker's process (counted there). `workerPids`: worker
 * processes besides this one, counted as worker CPU with it.
 */
export async function startCpuMeter(pool: pg.Pool, emulatorPid: number | null, workerPids: number[] = []): Promise<() => CpuFigures> {
  const pgPid = await postmasterPid(pool);
  const cpu0 = process.cpuUsage();
  const others = () => workerPids.reduce((n, pid) => n + (treeCpuSeconds(pid) ?? 0), 0);
  const others0 = others();
  const pg0 = pgPid === null ? null : treeCpuSeconds(pgPid);
  const em0 = emulatorPid === null ? null : treeCpuSeconds(emulatorPid);
  const t0 = performance.now();
  return () => {
    const c = process.cpuUsage(cpu0);
    const worker = (c.user + c.system) / 1e6 + others() - others0;
    const pgNow = pgPid === null ? null : treeCpuSeconds(pgPid);
    const emNow = emulatorPid === null ? null : treeCpuSeconds(emulatorPid);
    const postgres = pg0 === null || pgNow === null ? null : pgNow - pg0;
    const emulator = em0 === null || emNow === null ? null : emNow - em0;
    return {
      wall_s: round((performance.now() - t0) / 1000, 3),
      worker_cpu_s: round(worker, 3),
      postgres_cpu_s: postgres === null ? null : round(postgres, 3),
      emulator_cpu_s: emulator === null ? null : round(emulator, 3),
      emulator_share: emulator === null || worker === 0 ? null : round(emulator / worker, 3),
      load_avg_1m: round(os.loadavg()[0]!),
      cores: os.availableParallelism(),
    };
  };
}

/** The median of each figure over several measured runs. */
export function medianCpu(runs: CpuFigures[]): CpuFigures {
  const pick = (k: keyof CpuFigures) => {
    const xs = runs.map((r) => r[k]).filter((x): x is number => typeof x === 'number');
    return xs.length === runs.length ? round(median(xs), 3) : null;
  };
  return {
    wall_s: pick('wall_s')!,
    worker_cpu_s: pick('worker_cpu_s')!,
    postgres_cpu_s: pick('postgres_cpu_s'),
    emulator_cpu_s: pick('emulator_cpu_s'),
    emulator_share: pick('emulator_share'),
    load_avg_1m: pick('load_avg_1m')!,
    cores: runs[0]?.cores ?? os.availableParallelism(),
  };
}
