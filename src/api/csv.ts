/**
 * Reports as CSV files (`format=csv` on the analytics reports): one header line, one line per row,
 * the same fields as the JSON rows. A list of conversion values becomes one cell
 * (`EUR 120.5 (2); USD 30 (1)`: value and conversions per currency). Cells a spreadsheet would run
 * as a formula (starting with =, +, -, @, a tab or a carriage return: a teammate's name comes from
 * the directory) are escaped with a leading quote. csv-stringify does the quoting.
 */
import type { FastifyReply } from 'fastify';
import { stringify } from 'csv-stringify/sync';

/** Rows a paged report puts in one CSV file (the JSON pages hold at most 100). */
export const CSV_MAX_ROWS = 10_000;

interface ConversionValue {
  currency: string;
  value: number;
  conversions: number;
}

function cell(v: unknown): unknown {
  if (Array.isArray(v)) return (v as ConversionValue[]).map((c) => `${c.currency} ${c.value} (${c.conversions})`).join('; ');
  return v;
}

export function toCsv(rows: readonly object[], columns: readonly string[]): string {
  const records = rows.map((r) => Object.fromEntries(columns.map((c) => [c, cell((r as Record<string, unknown>)[c])])));
  return stringify(records, { header: true, columns: [...columns], escape_formulas: true });
}

/** Answers the rows as a CSV attachment named `<name>.csv`. */
export function sendCsv(reply: FastifyReply, name: string, rows: readonly object[], columns: readonly string[]): FastifyReply {
  return reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}.csv"`).send(toCsv(rows, columns));
}
