import { describe, expect, it } from 'vitest';
import { toCsv } from '../../src/api/csv.ts';

describe('reports as CSV', () => {
  it('one header line, one line per row, quoting where a cell needs it, conversion values in one cell', () => {
    const rows = [
      {
        name: 'Ann, Sales',
        clicks: 2,
        conversion_value: [
          { currency: 'EUR', value: 49.5, conversions: 1 },
          { currency: 'USD', value: 10, conversions: 2 },
        ],
      },
      { name: 'Bo "B"', clicks: 0, conversion_value: [] },
    ];
    expect(toCsv(rows, ['name', 'clicks', 'conversion_value'])).toBe('name,clicks,conversion_value\n"Ann, Sales",2,EUR 49.5 (1); USD 10 (2)\n"Bo ""B""",0,\n');
  });

  it('a cell a spreadsheet would run as a formula is escaped', () => {
    const csv = toCsv([{ name: '=HYPERLINK("http://evil.test")' }, { name: '+1 555' }, { name: '@SUM(A1)' }, { name: '-2' }], ['name']);
    expect(csv.split('\n').slice(1, 5)).toEqual([`"'=HYPERLINK(""http://evil.test"")"`, "'+1 555", "'@SUM(A1)", "'-2"]);
  });

  it('an empty report is its header alone', () => {
    expect(toCsv([], ['a', 'b'])).toBe('a,b\n');
  });
});
