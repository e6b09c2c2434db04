// The twin's dry-run diff in machined's format (textdiff.Diff's unified diff: `--- a` / `+++ b`,
// `@@ -l,n +l,n @@` hunks with 3 context lines; "No changes." when equal).
import { describe, expect, it } from 'vitest';
import { unifiedDiff } from '../../sim/talos/configDiff.js';

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n')).toBe('');
  });

  it('one changed line: a hunk with 3 lines of context on each side', () => {
    const a = lines(10);
    const b = [...a];
    b[4] = 'changed';
    expect(unifiedDiff(a.join('\n') + '\n', b.join('\n') + '\n')).toBe(
      [
        '--- a',
        '+++ b',
        '@@ -2,7 +2,7 @@',
        ' line 2',
        ' line 3',
        ' line 4',
        '-line 5',
        '+changed',
        ' line 6',
        ' line 7',
        ' line 8',
        '',
      ].join('\n'),
    );
  });

  it('changes far apart make two hunks; lines appended at the end have context before only', () => {
    const a = lines(20);
    const b = [...a.slice(0, 1), 'x', ...a.slice(2), 'tail'];
    expect(unifiedDiff(a.join('\n') + '\n', b.join('\n') + '\n')).toBe(
      [
        '--- a',
        '+++ b',
        '@@ -1,5 +1,5 @@',
        ' line 1',
        '-line 2',
        '+x',
        ' line 3',
        ' line 4',
        ' line 5',
        '@@ -18,3 +18,4 @@',
        ' line 18',
        ' line 19',
        ' line 20',
        '+tail',
        '',
      ].join('\n'),
    );
  });
});
