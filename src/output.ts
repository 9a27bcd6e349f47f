/**
 * What the CLI prints for people: stdout for results, stderr for problems. Logs go through pino.
 * Control characters (C0 but tab and line feed, DEL, C1) are printed as `\xHH`: a name synced from a
 * directory may carry ESC or BEL, which a terminal would obey (colours, a title, a bell). Bidi
 * controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) are printed as `\u{HHHH}`:
 * U+202E would reorder the rest of the line on screen.
 *
 * A table cell is one line: there tab, line feed and the Unicode line and paragraph separators are
 * escaped too, so a value cannot start a row of its own under the table's heading.
 */
export function out(line = ''): void {
  process.stdout.write(terminalSafe(line) + '\n');
}

export function err(line: string): void {
  process.stderr.write(terminalSafe(line) + '\n');
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CELL_CONTROL = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16).padStart(4, '0')}}`;
}

/** `s` with every control character but tab and line feed, and every bidi control, written escaped. */
export function terminalSafe(s: string): string {
  return s.replace(CONTROL, escapeChar);
}

/** `s` as one line: every control character (tab and line feed too), line separator and bidi control escaped. */
export function oneLine(s: string): string {
  return s.replace(CELL_CONTROL, escapeChar);
}

/** A fixed-width table for listings; every cell is one line (`oneLine`). */
export function table(rows: Record<string, unknown>[], columns: string[]): void {
  const cells = rows.map((r) => columns.map((c) => oneLine(formatCell(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  out(
    columns
      .map((c, i) => c.toUpperCase().padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  for (const row of cells)
    out(
      row
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  if (!rows.length) out('(none)');
}

function formatCell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (v instanceof Date) return v.toISOString();
  return String(v);
}
