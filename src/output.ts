/**
 * What the CLI prints for people: stdout for results, stderr for problems. Logs go through pino.
 * Control characters (C0 but tab and line feed, DEL, C1) are printed as `\xHH`: a name synced from a
 * directory may carry ESC or BEL, which a terminal would obey (colours, a title, a bell).
 */
export function out(line = ''): void {
  process.stdout.write(terminalSafe(line) + '\n');
}

export function err(line: string): void {
  process.stderr.write(terminalSafe(line) + '\n');
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** `s` with every control character but tab and line feed written as `\xHH`. */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
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
