/**
 * Counts what breaks the import rules of .dependency-cruiser.cjs, by kind: imports that point up a
 * layer, module cycles, folder cycles, modules outside any layer. With `--rooms FILE`, it also
 * lists the folders ("rooms") that FILE reaches through its imports, with the modules reached in each.
 *
 *   npx node scripts/import-graph.ts                                # the counts, one JSON line
 *   npx node scripts/import-graph.ts --rooms src/tasks/installMailbox.ts
 *
 * `npm run lint` fails on any of these; this script only counts them (for a before/after).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Dependency {
  resolved: string;
  dependencyTypes: string[];
}
interface Module {
  source: string;
  dependencies: Dependency[];
}
interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}
interface Cruise {
  modules: Module[];
  summary: { violations: Violation[] };
}

function cruise(): Cruise {
  // Run by this process's Node (the pinned one), not whatever `node` comes first on PATH.
  const bin = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
  const args = [bin, 'src', 'connectors', 'bench', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'];
  try {
    return JSON.parse(execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })) as Cruise;
  } catch (err) {
    // depcruise exits non-zero when it finds violations; its JSON is on stdout all the same.
    const stdout = (err as { stdout?: string }).stdout;
    if (!stdout) throw err;
    return JSON.parse(stdout) as Cruise;
  }
}

/**
 * The room a module lives in: its top folder in src/ (`src/install`, `src/api` for `src/api/v1/x.ts`), `src` for the root files, else its folder
 * (`connectors/google`).
 */
export function roomOf(file: string): string {
  return /^src\/[^/]+\//.exec(file)?.[0].slice(0, -1) ?? path.dirname(file);
}

/** The folders of src/ that lie on a cycle of the folder graph (strongly connected, Tarjan). */
function foldersInCycles(result: Cruise): string[] {
  const graph = new Map<string, Set<string>>();
  for (const m of result.modules) {
    if (!/^src\/[^/]+\//.test(m.source)) continue;
    const from = roomOf(m.source);
    for (const d of m.dependencies) {
      const to = roomOf(d.resolved);
      if (!/^src\/[^/]+\//.test(d.resolved) || to === from) continue;
      (graph.get(from) ?? graph.set(from, new Set()).get(from)!).add(to);
    }
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do scc.push((w = stack.pop()!));
      while (w !== v);
      if (scc.length > 1) out.push(...scc);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out.sort();
}

function counts(result: Cruise): Record<string, number | string[]> {
  const v = result.summary.violations;
  const upward = v.filter((x) => x.rule.name.endsWith('-not-up'));
  return {
    upward: upward.length,
    moduleCycles: v.filter((x) => x.rule.name === 'no-cycle').length,
    folderCycles: v.filter((x) => x.rule.name === 'no-folder-cycle').length,
    outsideLayers: v.filter((x) => x.rule.name === 'in-a-layer').length,
    other: v.filter((x) => !/-not-up$|^no-cycle$|^no-folder-cycle$|^in-a-layer$/.test(x.rule.name)).length,
    upwardImports: upward.map((x) => `${x.from} -> ${x.to}`),
    foldersInCycles: foldersInCycles(result),
  };
}

/** The folders FILE reaches through value imports (what runs), and the modules reached in each. */
function rooms(result: Cruise, file: string): Record<string, string[]> {
  const byName = new Map(result.modules.map((m) => [m.source, m]));
  const seen = new Set<string>([file]);
  const queue = [file];
  while (queue.length) {
    const m = byName.get(queue.shift()!);
    for (const d of m?.dependencies ?? []) {
      if (d.dependencyTypes.includes('type-only')) continue;
      if (!/^(src|connectors)\//.test(d.resolved) || seen.has(d.resolved)) continue;
      seen.add(d.resolved);
      queue.push(d.resolved);
    }
  }
  const out: Record<string, string[]> = {};
  for (const f of [...seen].sort()) (out[roomOf(f)] ??= []).push(path.basename(f));
  return out;
}

const result = cruise();
const i = process.argv.indexOf('--rooms');
if (i > 0) {
  const reached = rooms(result, process.argv[i + 1]!);
  for (const [room, files] of Object.entries(reached)) process.stdout.write(`${room}/ (${files.length}): ${files.join(' ')}\n`);
  process.stdout.write(`${JSON.stringify({ rooms: Object.keys(reached).length, modules: Object.values(reached).flat().length })}\n`);
} else {
  process.stdout.write(`${JSON.stringify(counts(result))}\n`);
}
