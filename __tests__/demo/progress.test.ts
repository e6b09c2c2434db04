// The demo's live lines: each node's mark follows its outcome, and a node's own lines print before it.
import { describe, expect, it } from 'vitest';
import { markOf, outcomeOfTitle, ProgressPrinter } from '../../demo/progress.js';
import type { Outcome } from '../../src/core/model/record.js';
import { formatGroupTitle } from '../../src/report/log.js';

const title = (outcome: Outcome) => formatGroupTitle({ node: 'worker-2', role: 'worker', outcome, durationMs: 6_800 });

describe('demo: the mark of a node', () => {
  it.each<[Outcome, string]>([
    ['rebooted', '✔'],
    ['reboot-skipped', '✔'],
    ['planned-reboot', '✔'],
    ['planned-skip', '✔'],
    ['quarantined', '⚠'],
    ['refused', '⚠'],
    ['failed', '✖'],
  ])('%s: %s, read back from the title the action writes', (outcome, mark) => {
    expect(outcomeOfTitle(title(outcome))).toBe(outcome);
    expect(markOf(outcomeOfTitle(title(outcome)))).toBe(mark);
  });

  it('a group written as the run ended early (no outcome in its title) is ⚠, not ✔', () => {
    expect(outcomeOfTitle('worker-2 (worker)')).toBeUndefined();
    expect(markOf(undefined)).toBe('⚠');
  });

  it('a long duration still reads as its outcome', () => {
    expect(outcomeOfTitle(formatGroupTitle({ node: 'cp-1', role: 'control-plane', outcome: 'failed', durationMs: 3_725_000 }))).toBe(
      'failed',
    );
  });
});

describe('demo: the order of the lines', () => {
  const printed = (lines: string[]): string[] => {
    const out: string[] = [];
    const p = new ProgressPrinter((l) => out.push(l));
    for (const l of lines) p.line(l);
    p.end();
    return out;
  };

  it("a node's post-reboot read-again line prints before its mark, its step starts as they come", () => {
    const out = printed([
      'worker-2: ▶ reboot',
      'worker-2: ▶ release',
      `::group::${title('rebooted')}`,
      '▶ reboot',
      '    0.43s  exit 0   kubectl get node worker-2',
      'worker-2: after the reboot cri is not readable (Talos answers before it loads cri); reading it again until it is final (ready-timeout)',
      '::endgroup::',
      'worker-3: ▶ read node (first)',
    ]);
    expect(out).toEqual([
      '    worker-2: ▶ reboot',
      '    worker-2: ▶ release',
      '    worker-2: after the reboot cri is not readable (Talos answers before it loads cri); reading it again until it is final (ready-timeout)',
      '  ✔ worker-2 (worker): rebooted in 6.8 s',
      '    worker-3: ▶ read node',
    ]);
  });

  it('a quarantined node gets ⚠ and a failed one ✖; a group the stream ends inside is still printed', () => {
    const out = printed([
      `::group::${title('quarantined')}`,
      '::endgroup::',
      `::group::${title('failed')}`,
      '::endgroup::',
      '::group::cp-1 (control-plane)',
    ]);
    expect(out).toEqual([
      '  ⚠ worker-2 (worker): quarantined in 6.8 s',
      '  ✖ worker-2 (worker): failed in 6.8 s',
      '  ⚠ cp-1 (control-plane)',
    ]);
  });

  it('--verbose prints every line as written', () => {
    const out: string[] = [];
    const p = new ProgressPrinter((l) => out.push(l), true);
    p.line('::group::x');
    p.line('::endgroup::');
    expect(out).toEqual(['  │ ::group::x', '  │ ::endgroup::']);
  });
});
