/**
 * Which indexes the queries use. The test suite (TEST_INDEX_USAGE=FILE, test/helpers/db.ts) and the
 * benchmarks (BENCH_INDEX_USAGE=FILE, bench/support.ts) append to FILE, before a database is dropped,
 * one JSON line per index of its public schema: {source, table, index, scans, bytes}
 * (pg_stat_user_indexes, and the index's size). This script sums such files per index and lists the
 * indexes never scanned, with their largest size seen (after a benchmark, the size at its scale).
 *
 *   TEST_INDEX_USAGE=/tmp/idx-suite.tsv npx vitest run
 *   BENCH_INDEX_USAGE=/tmp/idx-bench.tsv npm run bench -- sync-many --quick
 *   npx node scripts/index-usage.ts /tmp/idx-suite.tsv /tmp/idx-bench.tsv          # never scanned by any
 *   npx node scripts/index-usage.ts --all /tmp/idx-suite.tsv /tmp/idx-bench.tsv    # every index
 *
 * Output: one tab-separated line per index: index, table, then per file its scans, then the size in
 * bytes; the indexes no file saw scanned first.
 */
import fs from 'node:fs';
import pg from 'pg';

export interface IndexUsageRow {
  source: string;
  table: string;
  index: string;
  scans: number;
  bytes: number;
}

/**
 * Appends the index usage of database `url` to `file`, once no other session is connected to it
 * (a session's counts reach the statistics when it ends or goes idle, so a pool just ended may still
 * be flushing them); after `deadlineMs` it reads what is there.
 */
export async function appendIndexUsage(url: string, file: string, source: string, deadlineMs = 20_000): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const { rows } = await c.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      if (rows[0]!.n === 0 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await c.query('select pg_stat_clear_snapshot()');
    const { rows } = await c.query<{ table: string; index: string; scans: string; bytes: string }>(
      `select s.relname as table, s.indexrelname as index, s.idx_scan as scans, pg_relation_size(s.indexrelid) as bytes
         from pg_stat_user_indexes s where s.schemaname = 'public' order by s.relname, s.indexrelname`,
    );
    const lines = rows.map((r) => JSON.stringify({ source, table: r.table, index: r.index, scans: Number(r.scans), bytes: Number(r.bytes) }));
    if (lines.length > 0) fs.appendFileSync(file, lines.join('\n') + '\n');
  } finally {
    await c.end();
  }
}

export function readIndexUsage(file: string): IndexUsageRow[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as IndexUsageRow);
}

interface Summary {
  table: string;
  index: string;
  scans: number[];
  bytes: number;
}

/** Per index, its scans in each file and its largest size seen. */
export function summarize(files: string[]): Summary[] {
  const byIndex = new Map<string, Summary>();
  files.forEach((file, i) => {
    for (const r of readIndexUsage(file)) {
      const s = byIndex.get(r.index) ?? { table: r.table, index: r.index, scans: files.map(() => 0), bytes: 0 };
      s.scans[i]! += r.scans;
      s.bytes = Math.max(s.bytes, r.bytes);
      byIndex.set(r.index, s);
    }
  });
  const total = (s: Summary) => s.scans.reduce((a, b) => a + b, 0);
  return [...byIndex.values()].sort((a, b) => total(a) - total(b) || a.table.localeCompare(b.table) || a.index.localeCompare(b.index));
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const all = args.includes('--all');
  const files = args.filter((a) => a !== '--all');
  if (files.length === 0) {
    console.error('usage: npx node scripts/index-usage.ts [--all] FILE...');
    process.exit(2);
  }
  const rows = summarize(files).filter((s) => all || s.scans.every((n) => n === 0));
  console.log(['index', 'table', ...files.map((f) => `scans:${f}`), 'bytes'].join('\t'));
  for (const s of rows) console.log([s.index, s.table, ...s.scans, s.bytes].join('\t'));
}
