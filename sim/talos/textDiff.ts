// A unified diff of two texts, as Talos's pkg/machinery/textdiff prints it: `--- a` / `+++ b`
// headers and hunks of 3 context lines (used by machined's dry-run diff and CanApplyImmediate's refusal).
const CONTEXT = 3;

/** A unified diff of two texts (LCS over lines); empty when they are equal. */
export function unifiedDiff(a: string, b: string): string {
  if (a === b) return '';
  const x = a.split('\n');
  const y = b.split('\n');
  if (x.at(-1) === '') x.pop();
  if (y.at(-1) === '') y.pop();
  // LCS table from the end: lcs[i][j] = common lines of x[i..] and y[j..]
  const lcs = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  type Op = { t: ' ' | '-' | '+'; line: string; i: number; j: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) ops.push({ t: ' ', line: x[i], i: i++, j: j++ });
    // a deletion before an insertion, as unified diffs print a changed line
    else if (i < x.length && (j >= y.length || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push({ t: '-', line: x[i], i: i++, j });
    else ops.push({ t: '+', line: y[j], i, j: j++ });
  }
  // group changes into hunks with CONTEXT lines around them
  const out = ['--- a', '+++ b'];
  let k = 0;
  while (k < ops.length) {
    while (k < ops.length && ops[k].t === ' ') k++;
    if (k >= ops.length) break;
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    while (end < ops.length) {
      if (ops[end].t !== ' ') {
        end++;
        continue;
      }
      let run = end;
      while (run < ops.length && ops[run].t === ' ') run++;
      if (run >= ops.length || run - end > 2 * CONTEXT) {
        end = Math.min(run, end + CONTEXT);
        break;
      }
      end = run;
    }
    const hunk = ops.slice(start, end);
    const oldLines = hunk.filter((o) => o.t !== '+').length;
    const newLines = hunk.filter((o) => o.t !== '-').length;
    out.push(`@@ -${hunk[0].i + 1},${oldLines} +${hunk[0].j + 1},${newLines} @@`);
    for (const o of hunk) out.push(`${o.t}${o.line}`);
    k = end;
  }
  return `${out.join('\n')}\n`;
}
