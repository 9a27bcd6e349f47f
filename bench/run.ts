/**
 * Benchmark runner: `npm run bench -- <scenario> [--quick] [--option value ...]`, or `all`.
 *
 * Scenarios live in the registry (bench/scenarios.ts). Each gets the parsed options and a `log`
 * for human progress lines, and returns its figures. The runner prints the progress, then, as the
 * very last line, one JSON object: `{scenario, cores, ...figures}` (for `all`: `{scenario:"all",
 * cores, results:{name: figures}}`).
 *
 * Exit codes: 0 when every scenario ran to the end, also one that missed its goal (the ratio says
 * so); 1 when a scenario threw, reported correctness failures (`failures`: lost or duplicated work),
 * or ran past the deadline; 2 for an unknown scenario. On exit 1 the last line is still one JSON
 * object, with `error`.
 *
 * Every run has a deadline: `--deadline <seconds>`, by default 30 minutes (10 with --quick), for
 * the whole invocation. A scenario that hangs (a provider that never answers, a condition that is
 * never met) ends the process with exit 1 instead of running forever.
 */
import os from 'node:os';
import { scenarios } from './scenarios.ts';
import type { BenchArgs, Figures } from './types.ts';

function parseArgs(argv: string[]): { name: string | undefined; options: Record<string, string | boolean> } {
  const options: Record<string, string | boolean> = {};
  let name: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) options[a.slice(2, eq)] = a.slice(eq + 1);
      else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) options[a.slice(2)] = argv[++i]!;
      else options[a.slice(2)] = true;
    } else if (name === undefined) {
      name = a;
    }
  }
  return { name, options };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

const isQuick = (options: Record<string, string | boolean>) => options.quick === true || options.quick === 'true';

async function runOne(name: string, options: Record<string, string | boolean>): Promise<Figures> {
  const args: BenchArgs = { quick: isQuick(options), options, log: (l) => log(`[${name}] ${l}`) };
  log(`[${name}] starting${args.quick ? ' (quick)' : ''}`);
  const started = performance.now();
  const figures = await scenarios[name]!(args);
  log(`[${name}] done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return figures;
}

/** Correctness failures a scenario reported (`failures: string[]`), prefixed with its name. */
function failuresOf(name: string, figures: Figures): string[] {
  return Array.isArray(figures.failures) ? figures.failures.map((f) => `${name}: ${String(f)}`) : [];
}

function deadlineSeconds(options: Record<string, string | boolean>): number {
  if (options.deadline === undefined) return isQuick(options) ? 600 : 1800;
  const s = Number(options.deadline);
  if (!Number.isFinite(s) || s <= 0) {
    process.stderr.write(`--deadline: a number of seconds above 0; got "${String(options.deadline)}"\n`);
    process.exit(2);
  }
  return s;
}

/** Ends the process with exit 1 and a closing JSON line carrying the error. */
function fail(scenario: string, error: string): never {
  process.stderr.write(`bench ${scenario}: ${error}\n`);
  log(JSON.stringify({ scenario, cores: os.availableParallelism(), error }));
  process.exit(1);
}

const { name, options } = parseArgs(process.argv.slice(2));
const names = Object.keys(scenarios);
if (!name || (name !== 'all' && !Object.hasOwn(scenarios, name))) {
  process.stderr.write(`usage: npm run bench -- <scenario> [--quick] [--option value]\nscenarios: ${names.join(', ')}, all\n`);
  process.exit(name ? 2 : 0);
}
const cores = os.availableParallelism();
const deadline = deadlineSeconds(options);
const pastDeadline = () => fail(name, `deadline passed: still running after ${deadline} s (--deadline)`);
setTimeout(pastDeadline, deadline * 1000).unref();
try {
  if (name === 'all') {
    const results: Record<string, Figures> = {};
    for (const n of names) results[n] = await runOne(n, options);
    const failures = Object.entries(results).flatMap(([n, f]) => failuresOf(n, f));
    log(JSON.stringify({ scenario: 'all', cores, results }));
    if (failures.length) fail('all', failures.join('; '));
  } else {
    const figures = await runOne(name, options);
    log(JSON.stringify({ scenario: name, cores, ...figures }));
    const failures = failuresOf(name, figures);
    if (failures.length) fail(name, failures.join('; '));
  }
} catch (e) {
  fail(name, e instanceof Error ? (e.stack ?? e.message) : String(e));
}
// A scenario that computed synchronously past the deadline gave the timer no chance to fire.
if (performance.now() > deadline * 1000) pastDeadline();
// Whatever a scenario left open (a stray timer, a socket), the run is over.
process.exit(0);
