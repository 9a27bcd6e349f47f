/** What the CLI prints for people: stdout for results, stderr for problems. Logs go through pino. */
export function out(line = ''): void {
  process.stdout.write(line + '\n');
}

export function err(line: string): void {
  process.stderr.write(line + '\n');
}

/** A fixed-width table for listings. */
export function table(rows: Record<string, unknown>[], columns: string[]): void {
  const cells = rows.map((r) => columns.map((c) => formatCell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  out(columns.map((c, i) => c.toUpperCase().padEnd(widths[i]!)).join('  ').trimEnd());
  for (const row of cells) out(row.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd());
  if (!rows.length) out('(none)');
}

function formatCell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (v instanceof Date) return v.toISOString();
  return String(v);
}
