/** A small line diff (LCS) for showing how a rendered signature changed; HTML is split at tags. */
export function lineDiff(before: string, after: string, context = 2): string {
  const split = (s: string) => (s ? s.replace(/></g, '>\n<').split('\n') : []);
  const a = split(before);
  const b = split(after);
  if (before === after) return '(no change)';
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const ops: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push(`  ${a[i]}`);
      i++;
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) ops.push(`+ ${b[j++]}`);
    else ops.push(`- ${a[i++]}`);
  }
  const keep = ops.map((op, k) => !op.startsWith('  ') || ops.slice(Math.max(0, k - context), k + context + 1).some((o) => !o.startsWith('  ')));
  const lines: string[] = [];
  let skipped = false;
  ops.forEach((op, k) => {
    if (keep[k]) {
      lines.push(op);
      skipped = false;
    } else if (!skipped) {
      lines.push('  ...');
      skipped = true;
    }
  });
  return lines.join('\n');
}
