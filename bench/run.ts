/**
 * Benchmark runner: `npm run bench -- <scenario> [--quick] [--option value ...]`, or `all`.
 *
 * Scenarios live in the registry (bench/scenarios.ts). Each gets the parsed options and a `log`
 * for human progress lines, and returns its figures. The runner prints the progress, then, as the
 * very last line, one JSON object: `{scenario, cores, ...figures}` (for `all`: `{scenario:"all",
 * cores, results:{name: figures}}`). A scenario that misses its goal still prints and exits 0; only
 * an unknown scenario (exit 2) or a crash (exit 1) fail.
 */
import os from 'node:os';
import { scenarios, type BenchArgs, type Figures } from './scenarios.ts';

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

async function runOne(name: string, options: Record<string, string | boolean>): Promise<Figures> {
  const args: BenchArgs = { quick: options.quick === true || options.quick === 'true', options, log: (l) => log(`[${name}] ${l}`) };
  log(`[${name}] starting${args.quick ? ' (quick)' : ''}`);
  const started = performance.now();
  const figures = await scenarios[name]!(args);
  log(`[${name}] done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return figures;
}

const { name, options } = parseArgs(process.argv.slice(2));
const names = Object.keys(scenarios);
if (!name || (name !== 'all' && !Object.hasOwn(scenarios, name))) {
  process.stderr.write(`usage: npm run bench -- <scenario> [--quick] [--option value]\nscenarios: ${names.join(', ')}, all\n`);
  process.exit(name ? 2 : 0);
}
const cores = os.availableParallelism();
if (name === 'all') {
  const results: Record<string, Figures> = {};
  for (const n of names) results[n] = await runOne(n, options);
  log(JSON.stringify({ scenario: 'all', cores, results }));
} else {
  const figures = await runOne(name, options);
  log(JSON.stringify({ scenario: name, cores, ...figures }));
}
