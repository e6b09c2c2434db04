// The action's log as the demo prints it (without --verbose): each step start as it happens, and each
// node, once it ends, as its kept lines then one line with a mark saying how it went.
//
// The action writes a node's lines as one `::group::` when the node ends (src/report/nodeLog.ts); the
// group's title names its outcome (src/report/log.ts, formatGroupTitle). The demo holds the group until
// its `::endgroup::`, so a node's own lines (a post-reboot proof read again) print before its mark.
import type { Outcome } from '../src/core/model/record.js';
import { outcomeLabel } from '../src/report/log.js';

export type Mark = '✔' | '⚠' | '✖';

/**
 * ✔ the node has the new credential (rebooted or proven loaded) or plan predicted it; ⚠ it was left as
 * it was for a person (refused by a gate, quarantined); ✖ it failed. A Record over every outcome: a
 * new outcome does not compile until it has its mark.
 */
const MARKS: Record<Outcome, Mark> = {
  rebooted: '✔',
  'reboot-skipped': '✔',
  'planned-reboot': '✔',
  'planned-skip': '✔',
  refused: '⚠',
  quarantined: '⚠',
  failed: '✖',
};

/** The mark of an outcome; undefined (the run ended before the node did: partial, cancelled) is ⚠. */
export function markOf(outcome: Outcome | undefined): Mark {
  return outcome === undefined ? '⚠' : MARKS[outcome];
}

/** The outcome a group title (`w1 (worker): rebooted in 4.1 s`) names, if it names one. */
export function outcomeOfTitle(title: string): Outcome | undefined {
  return (Object.keys(MARKS) as Outcome[]).find((o) => title.includes(`): ${outcomeLabel(o)} in `));
}

/** A line of a node's that the demo shows: the settle gate's waits, the post-reboot proof read again. */
function shown(line: string): string | undefined {
  if (line.includes('settle gate: ')) return line;
  // what the post-reboot proof waited for: a boot answers before cri and its CRI files are there
  if (/after the reboot .*; reading it again/.test(line)) return line.replace(/^([^\s:]+): \1: /, '$1: ');
  return undefined;
}

/**
 * Feeds the action's stdout, line by line, and prints what the demo shows: `print` gets each line
 * ready to write. With `verbose`, every line as the action wrote it.
 */
export class ProgressPrinter {
  /** the node group being read: its title and the lines kept from it */
  private group: { title: string; kept: string[] } | undefined;

  constructor(
    private readonly print: (line: string) => void,
    private readonly verbose = false,
  ) {}

  line(line: string): void {
    if (this.verbose) return this.print(`  │ ${line}`);
    if (line.startsWith('::group::')) {
      this.endGroup();
      this.group = { title: line.slice('::group::'.length), kept: [] };
      return;
    }
    if (line === '::endgroup::') return this.endGroup();
    if (this.group) {
      const kept = shown(line);
      if (kept) this.group.kept.push(kept);
      return;
    }
    // several nodes run at once: one line per step start as it happens
    if (/^[^\s:]+: ▶ /.test(line)) return this.print(`    ${line.replace(/ \(.*\)$/, '')}`);
    const kept = shown(line);
    if (kept) this.print(`    ${kept}`);
  }

  /** the end of the stream: a group left open is printed as it stands */
  end(): void {
    this.endGroup();
  }

  private endGroup(): void {
    const g = this.group;
    if (!g) return;
    this.group = undefined;
    for (const l of g.kept) this.print(`    ${l}`);
    this.print(`  ${markOf(outcomeOfTitle(g.title))} ${g.title}`);
  }
}

/** Chunks of a stream → whole lines. */
export function lineByLine(f: (line: string) => void): (chunk: string) => void {
  let buf = '';
  return (chunk) => {
    buf += chunk;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) f(l);
  };
}
